"""make rehearse SET=your-set.json [KEEP=1]: your parameter set deployed from template.yaml on the
emulators before it goes to AWS, read back, and deleted (KEEP=1: left up to look at).

The stack goes where an emulator can create it: a set with ConsumerType=ecs on moto (which has
ECS, and no SAM transform: deploy_stack.py expands it here), any other on LocalStack. What the set
names as already there is made first, as its owner would have it: the queues of
ExistingWorkQueueArn and ExistingDeadLetterQueueArn (under the emulator's account: the set's ARNs
are rewritten to them) and the ECS cluster. A function of your own (ConsumerFunctionArn) is not
made: rehearse that path with `make invoke BINARY=…` instead. Run by make rehearse, under
scripts/emulators.sh run (its endpoints in the environment).
"""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import boto3

ROOT = Path(__file__).resolve().parent.parent
# What moto's CloudFormation skips while reporting CREATE_COMPLETE ("No Moto CloudFormation
# support"), as tests/tests/e2e/deployed/driver.rs holds it.
MOTO_SKIPS = ["AWS::ApplicationAutoScaling::ScalableTarget", "AWS::ApplicationAutoScaling::ScalingPolicy",
              "AWS::CloudWatch::Alarm", "AWS::SQS::QueuePolicy", "AWS::S3::BucketPolicy"]


def main():
    if len(sys.argv) < 3:
        print("usage: rehearse.py SET.json TARGET_DIR", file=sys.stderr)
        return 2
    set_path, target = Path(sys.argv[1]), Path(sys.argv[2])
    try:
        values = json.loads(set_path.read_text())
    except (OSError, ValueError) as err:
        print(f"rehearse: {set_path} is not a parameter set ({err}): give a JSON object of values", file=sys.stderr)
        return 2
    if not isinstance(values, dict):
        print(f"rehearse: {set_path} holds no JSON object of parameter values", file=sys.stderr)
        return 2
    if values.get("ConsumerFunctionArn"):
        print("rehearse: the set names a function of your own (ConsumerFunctionArn), which the emulators do "
              "not have: rehearse it with `make invoke BINARY=…`, or leave ConsumerFunctionArn out here",
              file=sys.stderr)
        return 2
    on_moto = values.get("ConsumerType") == "ecs"
    endpoint = os.environ["AWS_ENDPOINT_URL_SQS" if on_moto else "E2E_LOCALSTACK_CLOUDFORMATION"]
    emulator = "moto" if on_moto else "LocalStack"
    sqs = boto3.client("sqs", endpoint_url=endpoint, region_name="us-east-1")
    params, made = [], {}
    # The dead-letter queue first, so the work queue can name it in its redrive policy.
    for name in ("ExistingDeadLetterQueueArn", "ExistingWorkQueueArn"):
        arn = values.get(name)
        if arn:
            queue = arn.split(":")[-1]
            attributes = {"FifoQueue": "true"} if queue.endswith(".fifo") else {}
            note = ""
            if name == "ExistingWorkQueueArn" and "ExistingDeadLetterQueueArn" in made:
                policy = {"deadLetterTargetArn": made["ExistingDeadLetterQueueArn"], "maxReceiveCount": 5}
                attributes["RedrivePolicy"] = json.dumps(policy)
                note = ", its redrive policy to the dead-letter queue after 5 receives (yours may differ)"
            url = sqs.create_queue(QueueName=queue, Attributes=attributes)["QueueUrl"]
            made[name] = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
            print(f"rehearse: {name}: the queue {queue} made on {emulator} ({made[name]}){note}", file=sys.stderr)
            params += ["--param", f"{name}={made[name]}"]
    if on_moto and values.get("EcsClusterName"):
        boto3.client("ecs", endpoint_url=endpoint, region_name="us-east-1").create_cluster(
            clusterName=values["EcsClusterName"])
    stack = f"rehearse-{int(time.time())}"
    deploy = [sys.executable, str(ROOT / "scripts" / "deploy_stack.py")]
    common = ["--endpoint", endpoint, "--stack", stack]
    artefacts = []
    for binary in ("batch-consumer", "backlog-publisher"):
        artefacts += ["--artefact", f"{binary}={target / 'debug' / binary}"]
    create = [*deploy, "create", *common, "--set", str(set_path), *params, *artefacts]
    if on_moto:
        create.append("--transform-here")
    print(f"rehearse: creating stack {stack} on {emulator}", file=sys.stderr)
    if subprocess.run(create).returncode != 0:
        print(f"rehearse: the create failed (above: each resource's reason); the stack {stack} is left on "
              f"{emulator} to read", file=sys.stderr)
        return 1
    described = subprocess.run([*deploy, "describe", *common], capture_output=True, text=True, check=True)
    read = json.loads(described.stdout)
    listed = {logical: r for logical, r in read["resources"].items() if logical and r.get("type")}
    print(f"{stack} on {emulator}: {read['status']}, {len(listed)} resource(s)")
    for logical, resource in sorted(listed.items()):
        print(f"  {logical:40} {resource['type']:40} {resource.get('status', '')}")
    if on_moto:
        print(f"  moto's CloudFormation does not make {', '.join(MOTO_SKIPS)} (it reports the stack complete "
              "all the same): `sqs-backpressure doctor --template template.yaml --parameters "
              f"{set_path}` counts and checks them offline. Each policy statement the set leaves out is an "
              "inert Deny on moto (deploy_stack.py says why); on AWS it is absent.")
    print("outputs:")
    for key, value in sorted(read["outputs"].items()):
        print(f"  {key}: {value}")
    if "WorkerEnvironment" in read["outputs"]:
        print("for your service (docs/your-code.md, a service that scales itself): WorkerEnvironment goes into "
              "its container's environment and ConsumerAccessPolicyArn onto its task role; give the container "
              "a stopTimeout above its DRAIN_SECONDS and a healthCheck running your binary's `healthcheck`; "
              "point a target tracking policy at ScalingMetric. On AWS, `sqs-backpressure doctor --queue … "
              "--service CLUSTER/SERVICE` checks each of these.")
    if os.environ.get("KEEP") == "1":
        print(f"rehearse: KEEP=1: the stack stays on {emulator} ({endpoint}); scripts/emulators.sh stop ends it",
              file=sys.stderr)
        return 0
    subprocess.run([*deploy, "delete", *common], check=True)
    print(f"rehearse: stack {stack} deleted", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
