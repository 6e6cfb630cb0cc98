"""Mutation check for the IAM tests: break a grant, a scope or a declaration, and see a test fail.

    python scripts/iam_mutations.py            # every mutation; exit 1 if one survives

Each mutation edits one or two files in place, runs the IAM unit tests (then, if they pass, the
integration tests that record calls), and puts the files back whatever happens.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KINDS = "layers/reaper/reaper/kinds"
UNIT = ["tests/unit/test_iam.py", "tests/unit/test_restore_iam.py", "tests/unit/test_endpoint_iam.py"]
INTEGRATION = [
    "tests/integration/test_fsx_handler.py",
    "tests/integration/test_fsx_events.py",
    "tests/integration/test_endpoint_handler.py",
    "tests/integration/test_endpoint_offhours.py",
    "tests/integration/test_restore_endpoint.py",
]

# (name, [(file, old, new)]) - `old` must occur in the file
MUTATIONS: list[tuple[str, list[tuple[str, str, str]]]] = [
    (
        "PassRole to any service",
        [
            (
                "template.yaml",
                "            - Sid: EndpointPassSchedulerRole\n              Effect: Allow\n              Action:\n                - "
                "iam:PassRole\n              Resource: !GetAtt RestoreSchedulerRole.Arn\n              Condition:\n                "
                "StringEquals:\n                  iam:PassedToService: scheduler.amazonaws.com\n",
                "            - Sid: EndpointPassSchedulerRole\n              Effect: Allow\n              Action:\n                - "
                "iam:PassRole\n              Resource: !GetAtt RestoreSchedulerRole.Arn\n",
            )
        ],
    ),
    (
        "PassRole on every role",
        [
            (
                "template.yaml",
                "              Resource: !GetAtt FsxCheckSchedulerRole.Arn\n              Condition:",
                '              Resource: "*"\n              Condition:',
            )
        ],
    ),
    (
        "endpoint writes on every resource",
        [
            (
                "template.yaml",
                "                - sagemaker:DeleteTags\n              Resource: !Sub "
                '"arn:${AWS::Partition}:sagemaker:*:${AWS::AccountId}:endpoint/*"',
                '                - sagemaker:DeleteTags\n              Resource: "*"',
            )
        ],
    ),
    (
        "FSx writes on the wrong resource type",
        [
            (
                "template.yaml",
                '                - !Sub "arn:${AWS::Partition}:fsx:*:${AWS::AccountId}:file-system/*"\n                - !Sub '
                '"arn:${AWS::Partition}:fsx:*:${AWS::AccountId}:backup/*"\n                - !Sub '
                '"arn:${AWS::Partition}:fsx:*:${AWS::AccountId}:task/*"',
                '                - !Sub "arn:${AWS::Partition}:fsx:*:${AWS::AccountId}:volume/*"\n                - !Sub '
                '"arn:${AWS::Partition}:fsx:*:${AWS::AccountId}:backup/*"\n                - !Sub '
                '"arn:${AWS::Partition}:fsx:*:${AWS::AccountId}:task/*"',
            )
        ],
    ),
    (
        "FSx untag path dropped from the template",
        [
            (
                "template.yaml",
                "                - fsx:TagResource\n                - fsx:UntagResource\n",
                "                - fsx:TagResource\n",
            )
        ],
    ),
    (
        "FSx untag path dropped from code and template",
        [
            ("layers/reaper/reaper/aws/tagging.py", '"fsx": ("fsx:TagResource", "fsx:UntagResource")', '"fsx": ("fsx:TagResource",)'),
            (
                "template.yaml",
                "                - fsx:TagResource\n                - fsx:UntagResource\n",
                "                - fsx:TagResource\n",
            ),
        ],
    ),
    (
        "endpoint restore tag-on-create dropped",
        [
            (f"{KINDS}/endpoint_restore.py", '    "sagemaker:AddTags",  # CreateEndpoint with tags\n', ""),
            (
                "template.yaml",
                "                - sagemaker:CreateEndpoint\n                - sagemaker:AddTags\n",
                "                - sagemaker:CreateEndpoint\n",
            ),
        ],
    ),
    (
        "FSx restore tag-on-create dropped",
        [
            (f"{KINDS}/fsx_restore.py", '    "fsx:TagResource",\n)', ")"),
            (
                "template.yaml",
                "                - fsx:CreateFileSystemFromBackup\n                - fsx:TagResource\n",
                "                - fsx:CreateFileSystemFromBackup\n",
            ),
        ],
    ),
    (
        "Deny misses DeleteFileSystem on exempt",
        [
            (
                "template.yaml",
                '"Action": ["fsx:CreateBackup", "fsx:CreateDataRepositoryTask", "fsx:DeleteFileSystem"],\n             "Condition": '
                '{"StringEqualsIgnoreCase": {"aws:ResourceTag/${TagPrefix}exempt"',
                '"Action": ["fsx:CreateBackup", "fsx:CreateDataRepositoryTask"],\n             "Condition": {"StringEqualsIgnoreCase": '
                '{"aws:ResourceTag/${TagPrefix}exempt"',
            )
        ],
    ),
    (
        "Deny compares the exempt tag case-sensitively",
        [
            (
                "template.yaml",
                '"Condition": {"StringEqualsIgnoreCase": {"aws:ResourceTag/${TagPrefix}exempt": "true"}}}',
                '"Condition": {"StringEquals": {"aws:ResourceTag/${TagPrefix}exempt": "true"}}}',
            )
        ],
    ),
    (
        "Deny ignores the TagPrefix parameter",
        [("template.yaml", '"aws:ResourceTag/${TagPrefix}exempt"', '"aws:ResourceTag/reaper:exempt"')],
    ),
    (
        "new destructive action declared but not denied",
        [
            (
                f"{KINDS}/notebook.py",
                '("sagemaker:StopNotebookInstance",)',
                '("sagemaker:StopNotebookInstance", "sagemaker:DeleteNotebookInstance")',
            ),
            (
                "template.yaml",
                "                - sagemaker:StopNotebookInstance\n",
                "                - sagemaker:StopNotebookInstance\n                - sagemaker:DeleteNotebookInstance\n",
            ),
        ],
    ),
    (
        "autoscaling for any service",
        [
            (
                "template.yaml",
                "              Condition:\n                StringEquals:\n                  application-autoscaling:service-namespace: "
                "sagemaker\n                  application-autoscaling:scalable-dimension:\n                    - "
                "sagemaker:variant:DesiredInstanceCount\n                    - sagemaker:inference-component:DesiredCopyCount\n",
                "",
            )
        ],
    ),
    ("FSx check schedules under another name", [("template.yaml", ":schedule/*/mlreaper-fsx-*", ":schedule/*/other-*")]),
    ("wake schedules outside the restore group", [("template.yaml", ':schedule/${RestoreScheduleGroup}/*"', ':schedule/default/*"')]),
    (
        "wake alarm scope widened to every alarm",
        [
            (
                "template.yaml",
                ':alarm:mlreaper-wake-*"\n            - Sid: EndpointAlarmsRepoint',
                ':alarm:*"\n            - Sid: EndpointAlarmsRepoint',
            )
        ],
    ),
    (
        "repoint allows any alarm action",
        [
            (
                "template.yaml",
                "cloudwatch:AlarmActions: !Sub "
                '"arn:${AWS::Partition}:autoscaling:*:${AWS::AccountId}:scalingPolicy:*:resource/sagemaker/*"\n                "Null":\n   '
                '               cloudwatch:AlarmActions: "false"\n            - Sid: FsxRestoreRead',
                'cloudwatch:AlarmActions: "*"\n                "Null":\n                  cloudwatch:AlarmActions: "false"\n            - '
                "Sid: FsxRestoreRead",
            )
        ],
    ),
    (
        "a grant no code path uses",
        [
            (
                "template.yaml",
                "                - sagemaker:UpdateInferenceComponentRuntimeConfig\n              Resource: !Sub "
                '"arn:${AWS::Partition}:sagemaker:*:${AWS::AccountId}:inference-component/*"\n            - Sid: EndpointAutoscaling',
                "                - sagemaker:UpdateInferenceComponentRuntimeConfig\n                - sagemaker:DeleteInferenceComponent\n "
                '             Resource: !Sub "arn:${AWS::Partition}:sagemaker:*:${AWS::AccountId}:inference-component/*"\n            - '
                "Sid: EndpointAutoscaling",
            )
        ],
    ),
    (
        "no on-failure destination",
        [
            (
                "template.yaml",
                "          REAPER_FSX_CHECK_ROLE_ARN: !GetAtt FsxCheckSchedulerRole.Arn\n      EventInvokeConfig:  # async (schedule, "
                "event, Scheduler): after Lambda's two retries, keep it\n        MaximumRetryAttempts: 2\n        DestinationConfig:\n     "
                "     OnFailure:\n            Type: SQS\n            Destination: !GetAtt FailedInvocationsQueue.Arn\n",
                "          REAPER_FSX_CHECK_ROLE_ARN: !GetAtt FsxCheckSchedulerRole.Arn\n",
            )
        ],
    ),
]


def _pytest(paths: list[str]) -> bool:
    """True when the tests pass."""
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *paths], cwd=ROOT, capture_output=True, text=True
    )
    return run.returncode == 0


def main() -> int:
    survivors = 0
    for name, edits in MUTATIONS:
        originals = {f: (ROOT / f).read_text() for f, _, _ in edits}
        try:
            for f, old, new in edits:
                text = (ROOT / f).read_text()
                if old not in text:
                    raise SystemExit(f"mutation {name!r}: text not found in {f}")
                (ROOT / f).write_text(text.replace(old, new, 1))
            caught = "unit" if not _pytest(UNIT) else "integration" if not _pytest(INTEGRATION) else None
        finally:
            for f, text in originals.items():
                (ROOT / f).write_text(text)
        survivors += caught is None
        print(f"{'caught by ' + caught if caught else 'SURVIVED':24} {name}", flush=True)
    print(f"{len(MUTATIONS) - survivors}/{len(MUTATIONS)} mutations caught")
    return 1 if survivors else 0


if __name__ == "__main__":
    sys.exit(main())
