"""Deploys template.yaml on a CloudFormation emulator, as `sam deploy` would, and reads
the deployed stack back. The e2e test tests/tests/e2e/deployed/ drives it and
checks what it reads; this script decides nothing. Run with SAM's interpreter
(.venv-sam/bin/python, which `scripts/sam.sh install` makes: boto3, cfn-lint's loader
and the SAM translator).

  deploy_stack.py create  --endpoint URL --stack NAME --set SET.json [--param K=V ...]
                          --artefact Binary=PATH ... [--transform-here]
  deploy_stack.py update  (create's arguments, with the changed value among the --param)
  deploy_stack.py disable-mappings --endpoint URL --stack NAME
  deploy_stack.py describe --endpoint URL --stack NAME        (JSON on stdout)
  deploy_stack.py delete  --endpoint URL --stack NAME
  deploy_stack.py reproduce --endpoint URL --stack NAME --template T.yaml [--param K=V] [--then-delete]

create uploads each function's artefact (a zip holding the binary as `bootstrap`) to a
bucket and points that function's CodeUri at it, the one change `sam package` makes.
The template then goes to CreateStack as written, and the emulator runs the SAM
transform, as CloudFormation does; with --transform-here (moto's CloudFormation has no
SAM transform) it is first expanded here by the SAM translator, the library behind
AWS's own transform, and a policy statement that AWS::NoValue may leave out becomes one that
allows nothing (moto keeps it as a null, which it then refuses). A failed create, update or delete prints the stack's failure
reasons and exits 1.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAM_PYTHON = ROOT / ".venv-sam" / "bin" / "python"

try:
    import boto3
    import cfnlint  # noqa: F401 (the template's loader, imported where used)
    import samtranslator  # noqa: F401
    from botocore.config import Config
    from botocore.exceptions import ClientError
except ImportError:
    # Run with another interpreter: install the pinned SAM tooling (once a cache) and go on in it.
    if Path(sys.executable).resolve() == SAM_PYTHON.resolve() or os.environ.get("DEPLOY_STACK_REEXEC"):
        raise
    print("deploy_stack: installing the SAM translator and boto3 (scripts/sam.sh install)", file=sys.stderr)
    subprocess.run([str(ROOT / "scripts" / "sam.sh"), "install"], check=True)
    os.environ["DEPLOY_STACK_REEXEC"] = "1"
    os.execv(str(SAM_PYTHON), [str(SAM_PYTHON), __file__, *sys.argv[1:]])
CAPABILITIES = ["CAPABILITY_IAM", "CAPABILITY_NAMED_IAM", "CAPABILITY_AUTO_EXPAND"]
SETTLED = re.compile(r"_(COMPLETE|FAILED)$")


def client(args, service):
    # CloudFormation's calls are not retried: a CreateStack whose answer was a 500 may
    # have created the stack, and a second one would only meet AlreadyExists.
    attempts = 1 if service == "cloudformation" else 5
    return boto3.client(
        service,
        endpoint_url=args.endpoint,
        region_name="us-east-1",
        config=Config(retries={"total_max_attempts": attempts, "mode": "standard"}, read_timeout=120),
    )


def pairs(items):
    values = {}
    for item in items or []:
        name, sep, value = item.partition("=")
        if not sep:
            raise SystemExit(f"deploy_stack: --param and --artefact take NAME=VALUE, not {item!r}")
        values[name] = value
    return values


def with_code_uris(text, uris, absent):
    """The template's text with each function's `CodeUri: .` pointed at its artefact,
    the function found by the `Binary:` of its build metadata, which comes first. A function
    the set does not create points at `absent`, which nothing reads."""
    out, binary, replaced = [], None, set()
    for line in text.splitlines(keepends=True):
        found = re.match(r"\s+Binary: (\S+)\s*$", line)
        if found:
            binary = found.group(1)
        if re.match(r"\s+CodeUri: \.\s*$", line):
            line = line.replace("CodeUri: .", f"CodeUri: {uris.get(binary, absent)}")
            replaced.add(binary)
        out.append(line)
    missing = set(uris) - replaced
    if missing:
        raise SystemExit(f"deploy_stack: the template has no function built from {sorted(missing)}")
    return "".join(out)


def artefacts_for(text, values, given):
    """The --artefact values the set deploys: each one it needs, or an error naming the flag."""
    from cfnlint.decode import cfn_yaml
    from stack_artefacts import deployed_binaries

    created, skipped = deployed_binaries(cfn_yaml.loads(text), values)
    needed = sorted(set(created) - set(given))
    if needed:
        lines = [f"  --artefact {b}=PATH   (for {', '.join(created[b])})" for b in needed]
        raise SystemExit("deploy_stack: this parameter set deploys functions built from "
                         f"{', '.join(needed)}; give their binaries:\n" + "\n".join(lines))
    unused = sorted(set(given) - set(created))
    for binary in unused:
        print(f"deploy_stack: --artefact {binary} left out: this set creates no function built from it",
              file=sys.stderr)
    return {b: path for b, path in given.items() if b in created}


def transformed_here(text, parameters):
    from cfnlint.decode import cfn_yaml
    from samtranslator.translator.managed_policy_translator import ManagedPolicyLoader
    from samtranslator.translator.transform import transform

    class NoManagedPolicies(ManagedPolicyLoader):
        # The template gives every function its own role: no SAM policy template to resolve.
        def __init__(self):
            pass

        def load(self):
            return {}

    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")  # the translator's AWS::Region
    template = json.loads(json.dumps(cfn_yaml.loads(text)))
    return json.dumps(no_value_statements(transform(template, dict(parameters), NoManagedPolicies())))


# moto's CloudFormation leaves AWS::NoValue in a list as null, where CloudFormation drops the
# item, and refuses a managed policy holding a null statement. In its place, a statement that
# allows nothing: what the policy grants is the same.
INERT_STATEMENT = {"Effect": "Deny", "Action": "none:None", "Resource": "*"}


def no_value_statements(node):
    if isinstance(node, list):
        return [no_value_statements(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: no_value_statements(value) for key, value in node.items()}
    statements = out.get("Statement")
    if isinstance(statements, list):
        out["Statement"] = [inert_if_absent(statement) for statement in statements]
    return out


def inert_if_absent(statement):
    branches = statement.get("Fn::If") if isinstance(statement, dict) else None
    if not isinstance(branches, list) or len(branches) != 3:
        return statement
    absent = {"Ref": "AWS::NoValue"}
    return {"Fn::If": [branches[0]] + [INERT_STATEMENT if b == absent else b for b in branches[1:]]}


def artefact_bucket(stack):
    return f"{stack}-artefacts".lower()


def template_url(stack):
    return f"https://{artefact_bucket(stack)}.s3.amazonaws.com/template"


def upload(args, stack, artefacts):
    s3 = client(args, "s3")
    bucket = artefact_bucket(stack)
    uris = {}
    for binary, path in artefacts.items():
        archive = Path(args.workdir) / f"{stack}-{binary}.zip"
        with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as zf:
            info = zipfile.ZipInfo("bootstrap")
            info.external_attr = 0o755 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, Path(path).read_bytes())
        s3.upload_file(str(archive), bucket, f"{binary}.zip")
        archive.unlink()
        uris[binary] = f"s3://{bucket}/{binary}.zip"
    return uris


def wait(args, stack, wanted):
    cfn = client(args, "cloudformation")
    deadline = time.monotonic() + args.timeout
    while True:
        try:
            status = cfn.describe_stacks(StackName=stack)["Stacks"][0]["StackStatus"]
        except ClientError as err:
            if wanted == "DELETE_COMPLETE" and "does not exist" in str(err):
                return
            raise
        if status == wanted:
            return
        if SETTLED.search(status) and not status.endswith("_IN_PROGRESS"):
            failures(cfn, stack, f"{stack} ended {status}, not {wanted}")
        if time.monotonic() > deadline:
            failures(cfn, stack, f"{stack} still {status} after {args.timeout} s")
        time.sleep(1)


def failures(cfn, stack, summary):
    print(f"deploy_stack: {summary}", file=sys.stderr)
    try:
        for event in cfn.describe_stack_events(StackName=stack)["StackEvents"]:
            if event.get("ResourceStatusReason") and "FAILED" in event.get("ResourceStatus", ""):
                print(
                    f"  {event['LogicalResourceId']} ({event.get('ResourceType')}): "
                    f"{event['ResourceStatus']}: {event['ResourceStatusReason']}",
                    file=sys.stderr,
                )
    except ClientError as err:
        print(f"  (its events could not be read: {err})", file=sys.stderr)
    sys.exit(1)


def prepare(args):
    """The set's values with --param over them, and the template, its functions'
    artefacts uploaded, at the URL CloudFormation is given (past 51,200 bytes it takes
    a template only from S3, as sam deploy sends it)."""
    values = json.loads(Path(args.set).read_text())
    values.update(pairs(args.param))
    template = (ROOT / "template.yaml").read_text()
    uris = upload(args, args.stack, artefacts_for(template, values, pairs(args.artefact)))
    absent = f"s3://{artefact_bucket(args.stack)}/not-deployed.zip"
    text = with_code_uris(template, uris, absent)
    body = transformed_here(text, values) if args.transform_here else text
    client(args, "s3").put_object(Bucket=artefact_bucket(args.stack), Key="template", Body=body.encode())
    parameters = [{"ParameterKey": k, "ParameterValue": v} for k, v in values.items()]
    return parameters, template_url(args.stack)


def create(args):
    s3 = client(args, "s3")
    s3.create_bucket(Bucket=artefact_bucket(args.stack))
    parameters, url = prepare(args)
    client(args, "cloudformation").create_stack(
        StackName=args.stack, TemplateURL=url, Parameters=parameters, Capabilities=CAPABILITIES
    )
    wait(args, args.stack, "CREATE_COMPLETE")


def update(args):
    """Every value given again, as sam deploy gives its parameter overrides on each
    deploy (moto's UpdateStack fails on UsePreviousValue for a parameter left at its
    default, and LocalStack's takes no UsePreviousTemplate)."""
    parameters, url = prepare(args)
    client(args, "cloudformation").update_stack(
        StackName=args.stack, TemplateURL=url, Parameters=parameters, Capabilities=CAPABILITIES
    )
    wait(args, args.stack, "UPDATE_COMPLETE")


def delete(args):
    client(args, "cloudformation").delete_stack(StackName=args.stack)
    wait(args, args.stack, "DELETE_COMPLETE")


def disable_mappings(args):
    """The emulator's own poller would take the work the local consumer is to take: off."""
    cfn, lam = client(args, "cloudformation"), client(args, "lambda")
    for resource in cfn.list_stack_resources(StackName=args.stack)["StackResourceSummaries"]:
        if resource["ResourceType"] == "AWS::Lambda::EventSourceMapping":
            lam.update_event_source_mapping(UUID=resource["PhysicalResourceId"], Enabled=False)


def reproduce(args):
    """A minimal reproduction (tests/emulator-defects/) run as far as it goes: create,
    then with --param an update, then with --then-delete a delete; each step's outcome,
    an error's text included, and each queue's visibility timeout, as JSON."""
    cfn, sqs = client(args, "cloudformation"), client(args, "sqs")
    body = Path(args.template).read_text()
    out = {}

    def step(name, call, wanted):
        try:
            call()
        except Exception as err:  # moto answers some with an HTML 500 botocore cannot parse
            out[name] = f"{type(err).__name__}: {err}"
            return False
        deadline = time.monotonic() + args.timeout
        while True:
            try:
                status = cfn.describe_stacks(StackName=args.stack)["Stacks"][0]["StackStatus"]
            except ClientError as err:
                status = "DELETE_COMPLETE" if "does not exist" in str(err) else str(err)
            if not status.endswith("_IN_PROGRESS") or time.monotonic() > deadline:
                out[name] = status
                return status == wanted
            time.sleep(0.5)

    created = step("create", lambda: cfn.create_stack(StackName=args.stack, TemplateBody=body, Capabilities=CAPABILITIES), "CREATE_COMPLETE")
    if created and args.param:
        parameters = [{"ParameterKey": k, "ParameterValue": v} for k, v in pairs(args.param).items()]
        step("update", lambda: cfn.update_stack(StackName=args.stack, TemplateBody=body, Parameters=parameters, Capabilities=CAPABILITIES), "UPDATE_COMPLETE")
    if created:
        resources = cfn.list_stack_resources(StackName=args.stack)["StackResourceSummaries"]
        out["resources"] = sorted(r["LogicalResourceId"] for r in resources)
        out["visibility"] = {
            r["LogicalResourceId"]: sqs.get_queue_attributes(QueueUrl=r["PhysicalResourceId"], AttributeNames=["VisibilityTimeout"])["Attributes"]["VisibilityTimeout"]
            for r in resources
            if r["ResourceType"] == "AWS::SQS::Queue"
        }
    if created and args.then_delete:
        step("delete", lambda: cfn.delete_stack(StackName=args.stack), "DELETE_COMPLETE")
    json.dump(out, sys.stdout, indent=1)


def read(call, **kwargs):
    try:
        answer = call(**kwargs)
        answer.pop("ResponseMetadata", None)
        return answer
    except ClientError as err:
        return {"error": err.response.get("Error", {}).get("Code", "?")}


def describe(args):
    cfn = client(args, "cloudformation")
    stack = cfn.describe_stacks(StackName=args.stack)["Stacks"][0]
    resources = cfn.list_stack_resources(StackName=args.stack)["StackResourceSummaries"]
    readers = Readers(args)
    out = {
        "status": stack["StackStatus"],
        "parameters": {p["ParameterKey"]: p.get("ParameterValue") for p in stack["Parameters"]},
        "outputs": {o["OutputKey"]: o["OutputValue"] for o in stack.get("Outputs", [])},
        "resources": {},
    }
    for resource in resources:
        kind, physical = resource["ResourceType"], resource.get("PhysicalResourceId", "")
        entry = {"type": kind, "physical": physical, "status": resource["ResourceStatus"]}
        reader = readers.by_type.get(kind)
        if reader is not None and physical:
            entry["read"] = reader(physical)
        out["resources"][resource["LogicalResourceId"]] = entry
    json.dump(out, sys.stdout, default=str, indent=1)


class Readers:
    """What each resource type's own API says of a deployed resource."""

    def __init__(self, args):
        self.args = args
        self.clients = {}
        self.by_type = {
            "AWS::SQS::Queue": self.queue,
            "AWS::Lambda::Function": self.function,
            "AWS::Lambda::EventSourceMapping": self.mapping,
            "AWS::DynamoDB::Table": self.table,
            "AWS::S3::Bucket": self.bucket,
            "AWS::Events::Rule": self.rule,
            "AWS::ECS::TaskDefinition": self.task_definition,
            "AWS::ECS::Service": self.service,
            "AWS::CloudWatch::Alarm": self.alarm,
            "AWS::CloudWatch::Dashboard": self.dashboard,
        }

    def c(self, service):
        # One client per service for the whole read: building one costs more than a call.
        if service not in self.clients:
            self.clients[service] = client(self.args, service)
        return self.clients[service]

    def queue(self, url):
        return read(self.c("sqs").get_queue_attributes, QueueUrl=url, AttributeNames=["All"])

    def function(self, name):
        lam = self.c("lambda")
        return {
            "configuration": read(lam.get_function_configuration, FunctionName=name),
            "concurrency": read(lam.get_function_concurrency, FunctionName=name),
            "invoke_config": read(lam.get_function_event_invoke_config, FunctionName=name),
        }

    def mapping(self, uuid):
        return read(self.c("lambda").get_event_source_mapping, UUID=uuid)

    def table(self, name):
        ddb = self.c("dynamodb")
        return {
            "table": read(ddb.describe_table, TableName=name),
            "ttl": read(ddb.describe_time_to_live, TableName=name),
        }

    def bucket(self, name):
        s3 = self.c("s3")
        return {
            "encryption": read(s3.get_bucket_encryption, Bucket=name),
            "public_access": read(s3.get_public_access_block, Bucket=name),
        }

    def rule(self, physical):
        events = self.c("events")
        name = physical.split("/")[-1]
        return {
            "rule": read(events.describe_rule, Name=name),
            "targets": read(events.list_targets_by_rule, Rule=name),
        }

    def task_definition(self, arn):
        return read(self.c("ecs").describe_task_definition, taskDefinition=arn)

    def service(self, arn):
        # arn:aws:ecs:REGION:ACCOUNT:service/CLUSTER/NAME
        cluster = arn.split("/")[-2] if arn.count("/") >= 2 else None
        kwargs = {"services": [arn]} | ({"cluster": cluster} if cluster else {})
        return read(self.c("ecs").describe_services, **kwargs)

    def alarm(self, name):
        return read(self.c("cloudwatch").describe_alarms, AlarmNames=[name])

    def dashboard(self, name):
        return read(self.c("cloudwatch").get_dashboard, DashboardName=name)


def main():
    parser = argparse.ArgumentParser(
        description="Deploys template.yaml with a parameter set on a CloudFormation emulator "
        "(moto or LocalStack), as `sam deploy` would, and reads the stack back. make rehearse "
        "does it all for a set of yours.",
        epilog="Each function's artefact is its built binary (target/debug/batch-consumer, say); "
        "only the functions the set creates need one. Run with any python3: the SAM translator "
        "and boto3 are installed first (scripts/sam.sh install) when missing.",
    )
    parser.add_argument("command", choices=["create", "update", "describe", "delete", "disable-mappings", "reproduce"],
                        help="create: upload the artefacts and the template, CreateStack, wait; update: the "
                        "same with changed --param values; describe: each resource read back, as JSON; delete; "
                        "disable-mappings: turn the stack's event source mappings off; reproduce: an emulator "
                        "defect's minimal template (--template)")
    parser.add_argument("--endpoint", required=True, metavar="URL",
                        help="the emulator's endpoint: moto's (AWS_ENDPOINT_URL_SQS in .emulators/env) or "
                        "LocalStack's (E2E_LOCALSTACK_CLOUDFORMATION)")
    parser.add_argument("--stack", required=True, metavar="NAME", help="the stack's name")
    parser.add_argument("--set", metavar="FILE",
                        help="create/update: the parameter set, a JSON object of parameter values "
                        '({"ConsumerType": "ecs", ...}, as in tests/template-sets/)')
    parser.add_argument("--param", action="append", metavar="NAME=VALUE",
                        help="a parameter's value over the set's; repeat for several")
    parser.add_argument("--artefact", action="append", metavar="BINARY=PATH",
                        help="a function's built binary, by the Binary its build metadata names "
                        "(batch-consumer, backlog-publisher); asked for only when the set creates that function")
    parser.add_argument("--transform-here", action="store_true",
                        help="expand the SAM transform here before CreateStack: for moto, whose "
                        "CloudFormation has none (LocalStack runs it itself)")
    parser.add_argument("--template", metavar="FILE", help="reproduce: the minimal template")
    parser.add_argument("--then-delete", action="store_true", help="reproduce: delete the stack after")
    parser.add_argument("--workdir", default="/tmp", metavar="DIR",
                        help="where the artefacts are zipped before upload (default /tmp)")
    parser.add_argument("--timeout", type=float, default=300, metavar="SECONDS",
                        help="how long to wait for the stack to settle (default 300)")
    args = parser.parse_args()
    commands = {
        "create": create,
        "update": update,
        "describe": describe,
        "delete": delete,
        "disable-mappings": disable_mappings,
        "reproduce": reproduce,
    }
    try:
        commands[args.command](args)
    except ClientError as err:
        error = err.response.get("Error", {})
        print(f"deploy_stack: {args.command} {args.stack}: {error.get('Code')}: {error.get('Message')}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
