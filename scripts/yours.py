"""What a user already runs beside the stack, made on an emulator for the end-to-end tests of
docs/your-code.md: their own Lambda function and its role, its environment set from the stack's
ConsumerEnvironment output as the docs say, and an ECS service's own scalable target and target
tracking policy. Run with SAM's interpreter (.venv-sam/bin/python); each command prints JSON.

  yours.py function        --endpoint URL --name NAME --artefact PATH
  yours.py set-environment --endpoint URL --name NAME --environment JSON
  yours.py read-function   --endpoint URL --name NAME
  yours.py scaling         --endpoint URL --cluster C --service S   (registers target and policy)
  yours.py read-scaling    --endpoint URL --cluster C --service S
"""

import argparse
import io
import json
import sys
import zipfile
from pathlib import Path

import boto3
from botocore.config import Config
from botocore.exceptions import ClientError

TRUST = {
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"}],
}


def client(args, service):
    return boto3.client(
        service,
        endpoint_url=args.endpoint,
        region_name="us-east-1",
        config=Config(retries={"total_max_attempts": 5, "mode": "standard"}),
    )


def function(args):
    """The user's function, deployed their way (not by the stack): a role and a zip."""
    role = client(args, "iam").create_role(RoleName=f"{args.name}-role", AssumeRolePolicyDocument=json.dumps(TRUST))
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        info = zipfile.ZipInfo("bootstrap")
        info.external_attr = 0o755 << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        zf.writestr(info, Path(args.artefact).read_bytes(), compresslevel=1)
    made = client(args, "lambda").create_function(
        FunctionName=args.name,
        Runtime="provided.al2023",
        Handler="bootstrap",
        Role=role["Role"]["Arn"],
        Code={"ZipFile": archive.getvalue()},
        Timeout=30,
        Environment={"Variables": {"FROZEN_ACCOUNT": "frozen"}},
    )
    json.dump({"functionArn": made["FunctionArn"], "roleName": role["Role"]["RoleName"]}, sys.stdout)


def set_environment(args):
    """The stack's variables set beside the function's own, as docs/your-code.md does it."""
    lam = client(args, "lambda")
    current = lam.get_function_configuration(FunctionName=args.name).get("Environment", {}).get("Variables", {})
    given = json.loads(args.environment)["Variables"]
    lam.update_function_configuration(FunctionName=args.name, Environment={"Variables": current | given})
    read_function(args)


def read_function(args):
    lam, iam = client(args, "lambda"), client(args, "iam")
    configuration = lam.get_function_configuration(FunctionName=args.name)
    role = configuration["Role"].rsplit("/", 1)[-1]
    attached = iam.list_attached_role_policies(RoleName=role)["AttachedPolicies"]
    out = {"environment": configuration.get("Environment", {}).get("Variables", {}), "attached": attached}
    json.dump(out, sys.stdout, default=str)


def resource_id(args):
    return f"service/{args.cluster}/{args.service}"


def scaling(args):
    """The service's own target and policy, as a team that scales it already has them."""
    aas = client(args, "application-autoscaling")
    aas.register_scalable_target(
        ServiceNamespace="ecs",
        ResourceId=resource_id(args),
        ScalableDimension="ecs:service:DesiredCount",
        MinCapacity=1,
        MaxCapacity=7,
    )
    aas.put_scaling_policy(
        PolicyName="own-cpu",
        ServiceNamespace="ecs",
        ResourceId=resource_id(args),
        ScalableDimension="ecs:service:DesiredCount",
        PolicyType="TargetTrackingScaling",
        TargetTrackingScalingPolicyConfiguration={
            "TargetValue": 60.0,
            "PredefinedMetricSpecification": {"PredefinedMetricType": "ECSServiceAverageCPUUtilization"},
        },
    )
    read_scaling(args)


def read_scaling(args):
    aas = client(args, "application-autoscaling")
    targets = aas.describe_scalable_targets(ServiceNamespace="ecs", ResourceIds=[resource_id(args)])
    policies = aas.describe_scaling_policies(ServiceNamespace="ecs", ResourceId=resource_id(args))
    out = {
        "targets": [(t["MinCapacity"], t["MaxCapacity"]) for t in targets["ScalableTargets"]],
        "policies": sorted(
            (
                {
                    "name": p["PolicyName"],
                    "type": p["PolicyType"],
                    "targetTracking": p.get("TargetTrackingScalingPolicyConfiguration"),
                    "stepScaling": p.get("StepScalingPolicyConfiguration"),
                }
                for p in policies["ScalingPolicies"]
            ),
            key=lambda p: p["name"],
        ),
    }
    json.dump(out, sys.stdout)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = {
        "function": function,
        "set-environment": set_environment,
        "read-function": read_function,
        "scaling": scaling,
        "read-scaling": read_scaling,
    }
    parser.add_argument("command", choices=list(commands))
    for option in ["--endpoint", "--name", "--artefact", "--environment", "--cluster", "--service"]:
        parser.add_argument(option)
    args = parser.parse_args()
    try:
        commands[args.command](args)
    except ClientError as err:
        error = err.response.get("Error", {})
        print(f"yours: {args.command}: {error.get('Code')}: {error.get('Message')}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
