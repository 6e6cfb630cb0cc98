"""STS AssumeRole across accounts, refused unless the role trusts the caller's account: moto 5.2.5 hands
out credentials for any role ARN ("the role does not need to exist").

AWS (AssumeRole, API reference): "You specify the trusted principal that is allowed to assume the role in
the role trust policy. To assume a role from a different account, your Amazon Web Services account must
be trusted by the role. The trust relationship is defined in the role's trust policy when the role is
created." https://docs.aws.amazon.com/STS/latest/APIReference/API_AssumeRole.html
The refusal is the common AccessDenied ("User: <caller> is not authorized to perform: sts:AssumeRole on
resource: <role arn>"), the same for a role that does not exist (AWS does not tell them apart).

Scoped, not applied by `moto_ext.apply()`: other tests switch accounts by assuming roles moto never
made (OrganizationAccountAccessRole). `trust_enforced()` holds the rule for a block: a role in another
account is assumed only when it exists there and an Allow statement of its trust policy names the
caller's account (`arn:<partition>:iam::<account>:root` or the bare account id) for sts:AssumeRole, with
no Condition (this kit evaluates none). A role in the caller's own account is left to moto as before.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import unquote

from moto.iam.models import iam_backends
from moto.sts.exceptions import STSClientError
from moto.sts.models import STSBackend

_original = STSBackend.assume_role


class AccessDenied(STSClientError):
    code = "AccessDenied"

    def __init__(self, caller: str, role_arn: str) -> None:
        super().__init__(f"User: arn:aws:iam::{caller}:root is not authorized to perform: sts:AssumeRole on resource: {role_arn}")


def trusts(document: Any, caller: str) -> bool:
    """Does this trust policy let `caller` (an account id) assume the role?"""
    policy = json.loads(unquote(document)) if isinstance(document, str) else document
    statements = policy.get("Statement", [])
    for stmt in statements if isinstance(statements, list) else [statements]:
        actions = stmt.get("Action")
        if stmt.get("Effect") != "Allow" or "sts:AssumeRole" not in (actions if isinstance(actions, list) else [actions]):
            continue
        if stmt.get("Condition"):
            continue
        principal = stmt.get("Principal")
        aws = principal.get("AWS") if isinstance(principal, dict) else None
        names = aws if isinstance(aws, list) else [aws]
        if any(n == caller or (isinstance(n, str) and n.endswith(f":iam::{caller}:root")) for n in names):
            return True
    return False


def _assume_role(self: STSBackend, region_name: str, role_session_name: str, role_arn: str, *args: Any, **kwargs: Any) -> Any:
    caller = self.account_id
    parts = role_arn.split(":")
    account = parts[4] if len(parts) > 5 else ""
    if account and account != caller:
        name = role_arn.split("/")[-1]
        roles = [r for r in iam_backends[account][parts[1]].roles.values() if r.name == name]
        if not roles or not trusts(roles[0].assume_role_policy_document, caller):
            raise AccessDenied(caller, role_arn)
    return _original(self, region_name, role_session_name, role_arn, *args, **kwargs)


@contextmanager
def trust_enforced() -> Iterator[None]:
    """Within the block, AssumeRole into another account follows the role's trust policy."""
    STSBackend.assume_role = _assume_role  # type: ignore[method-assign]
    try:
        yield
    finally:
        STSBackend.assume_role = _original  # type: ignore[method-assign]
