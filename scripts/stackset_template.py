"""Expand the packaged SAM template into plain CloudFormation for a service-managed StackSet.

"CloudFormation StackSets doesn't currently support creating or updating stack sets with
service-managed permissions from templates that reference macros", and AWS::Serverless is a macro
hosted by CloudFormation (docs/aws-assumptions.md). So the organisation's StackSet gets the template
SAM would have produced, by SAM's own translator (aws-sam-translator: in the SAM CLI's environment,
and in the dev requirements for the tests):

    .venv-sam/bin/python scripts/stackset_template.py packaged.yaml [--regional-buckets PREFIX] > stackset.json

The input is `sam package`'s output (CodeUri/ContentUri already S3 locations). Nothing is called
in AWS: the template uses no SAM policy templates or managed-policy names that need a lookup.

Lambda takes code only from a bucket in the function's own region, and a StackSet has one template
for every region: with --regional-buckets PREFIX, each artifact's bucket becomes PREFIX-<region of the
stack> (Fn::Sub), and the artifacts are copied to one such bucket per region (`make deploy-org`).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from cfnlint.decode.cfn_yaml import loads
from samtranslator.translator.transform import transform


class NoLookups:
    """A managed-policy loader that never calls IAM: a name it would have to resolve is an error."""

    def load(self) -> dict[str, str]:
        return {}


def expand(text: str, regional_buckets: str | None = None) -> dict[str, Any]:
    # The translator asks for a region to fill its pseudo-parameters; none is written into the output
    # (tested: the expanded template names no region), so any region serves.
    os.environ.setdefault("AWS_DEFAULT_REGION", "us-east-1")
    out: dict[str, Any] = transform(loads(text), {}, NoLookups())
    out.pop("Transform", None)
    # the Serverless Application Repository's metadata is for `sam publish`, not for a StackSet
    out.get("Metadata", {}).pop("AWS::ServerlessRepo::Application", None)
    if regional_buckets:
        for res in out["Resources"].values():
            where = res.get("Properties", {}).get("Code") or res.get("Properties", {}).get("Content")
            if isinstance(where, dict) and isinstance(where.get("S3Bucket"), str):
                where["S3Bucket"] = {"Fn::Sub": regional_buckets + "-${AWS::Region}"}
    return out


def main(argv: list[str]) -> int:
    args = argv[1:]
    prefix = None
    if "--regional-buckets" in args and args.index("--regional-buckets") + 1 < len(args):
        at = args.index("--regional-buckets")
        prefix, args = args[at + 1], args[:at] + args[at + 2 :]
    if len(args) != 1:
        print("usage: stackset_template.py PACKAGED_TEMPLATE [--regional-buckets PREFIX] > stackset.json", file=sys.stderr)
        return 2
    json.dump(expand(Path(args[0]).read_text(encoding="utf-8"), prefix), sys.stdout, indent=1, default=str)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
