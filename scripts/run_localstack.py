"""Start LocalStack in host mode, with one parser fix backported.

localstack-core 4.12.0 is the newest release that runs on Python 3.11 (4.14 has the
fix below but its CloudWatch store needs Python 3.12). Its rpc-v2-cbor request
parser reads a CBOR timestamp (tag 1) with int(), so the float epoch seconds that
the Smithy RPC v2 spec prescribes, and that aws-sdk-cloudwatch sends for
MetricDatum.Timestamp and GetMetricStatistics' StartTime/EndTime, fail with
"An unknown error occurred when trying to parse the request". LocalStack 4.14
parses them as seconds with millisecond precision; this does the same. Nothing
else about the emulator changes.
"""

import datetime

from localstack.aws.protocol import parser


def _parse_type_datetime(self, value):
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return datetime.datetime.fromtimestamp(int(value * 1000) / 1000, tz=datetime.timezone.utc)
    raise parser.ProtocolParserError(f"Unable to parse datetime value: {value}")


parser.BaseCBORRequestParser._parse_type_datetime = _parse_type_datetime

if __name__ == "__main__":
    from localstack.runtime.main import main

    main()
