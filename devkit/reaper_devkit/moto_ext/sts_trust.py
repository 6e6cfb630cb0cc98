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
caller's account (`arn:<partition>:iam::<account>:root` or the bare account id) for sts:AssumeRole, and
every Condition of that statement holds. The one condition key evaluated is aws:PrincipalArn
(https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_condition-keys.html#condition-keys-principalarn:
"Use this key to compare the Amazon Resource Name (ARN) of the principal that made the request with the
ARN that you specify in the policy. For IAM roles, the request context returns the ARN of the role, not
the ARN of the user that assumed the role"; the account's root user is `arn:<partition>:iam::<account>:root`),
with ArnEquals, ArnLike, StringEquals or StringLike (several values: any one). A statement with any other
condition key or operator is not satisfied (refused, never guessed). The caller's principal is found from
its access key: an assumed role's role ARN, an IAM user's ARN, else the account's root.
A role in the caller's own account is left to moto as before.
"""

from __future__ import annotations

import fnmatch
import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import unquote

from moto.iam.models import iam_backends
from moto.sts.exceptions import STSClientError
from moto.sts.models import STSBackend, sts_backends
from moto.sts.responses import TokenResponse

_original = STSBackend.assume_role
_original_response = TokenResponse.assume_role


class AccessDenied(STSClientError):
    code = "AccessDenied"

    def __init__(self, caller: str, role_arn: str) -> None:
        super().__init__(f"User: arn:aws:iam::{caller}:root is not authorized to perform: sts:AssumeRole on resource: {role_arn}")


def trusts(document: Any, caller: str, principal_arn: str | None = None) -> bool:
    """Does this trust policy let `caller` (an account id), as `principal_arn` (its aws:PrincipalArn; the
    account's root when None), assume the role?"""
    policy = json.loads(unquote(document)) if isinstance(document, str) else document
    statements = policy.get("Statement", [])
    principal_arn = principal_arn or f"arn:aws:iam::{caller}:root"
    for stmt in statements if isinstance(statements, list) else [statements]:
        actions = stmt.get("Action")
        if stmt.get("Effect") != "Allow" or "sts:AssumeRole" not in (actions if isinstance(actions, list) else [actions]):
            continue
        if not conditions_hold(stmt.get("Condition") or {}, principal_arn):
            continue
        principal = stmt.get("Principal")
        aws = principal.get("AWS") if isinstance(principal, dict) else None
        names = aws if isinstance(aws, list) else [aws]
        if any(n == caller or (isinstance(n, str) and n.endswith(f":iam::{caller}:root")) for n in names):
            return True
    return False


def conditions_hold(condition: dict[str, Any], principal_arn: str) -> bool:
    """Every operator and key of a Condition block holds (all of them: AND); only aws:PrincipalArn is known."""
    for operator, tests in condition.items():
        if operator not in _OPERATORS or not isinstance(tests, dict):
            return False
        for key, wanted in tests.items():
            if key.lower() != "aws:principalarn":
                return False
            values = wanted if isinstance(wanted, list) else [wanted]
            if not any(_OPERATORS[operator](principal_arn, str(v)) for v in values):
                return False
    return True


def _like(value: str, pattern: str) -> bool:
    """IAM's `*` (any run) and `?` (one character); nothing else is special."""
    return fnmatch.fnmatchcase(value, pattern.replace("[", "[[]"))


_OPERATORS: dict[str, Callable[[str, str], bool]] = {
    "ArnEquals": lambda value, wanted: value == wanted,
    "ArnLike": _like,
    "StringEquals": lambda value, wanted: value == wanted,
    "StringLike": _like,
}


def caller_principal(access_key: str | None, account: str) -> str:
    """aws:PrincipalArn of the caller with this access key: an assumed role's role, an IAM user, else the root."""
    for sts_of_account in sts_backends.values():
        for sts in sts_of_account.values():
            role = sts.get_assumed_role_from_access_key(access_key or "")
            if role is not None:
                return str(role.role_arn)
    for iam_of_account in iam_backends.values():
        for iam in iam_of_account.values():
            user = iam.get_user_from_access_key_id(access_key or "")
            if user is not None:
                return str(user.arn)
    return f"arn:aws:iam::{account}:root"


_caller = threading.local()  # the access key of the AssumeRole request being served (moto's backend is not told it)


def _assume_role_response(self: TokenResponse) -> Any:
    _caller.key = self.get_access_key()
    try:
        return _original_response(self)
    finally:
        _caller.key = None


def _assume_role(self: STSBackend, region_name: str, role_session_name: str, role_arn: str, *args: Any, **kwargs: Any) -> Any:
    caller = self.account_id
    parts = role_arn.split(":")
    account = parts[4] if len(parts) > 5 else ""
    if account and account != caller:
        name = role_arn.split("/")[-1]
        roles = [r for r in iam_backends[account][parts[1]].roles.values() if r.name == name]
        principal = caller_principal(getattr(_caller, "key", None), caller)
        if not roles or not trusts(roles[0].assume_role_policy_document, caller, principal):
            raise AccessDenied(caller, role_arn)
    return _original(self, region_name, role_session_name, role_arn, *args, **kwargs)


@contextmanager
def trust_enforced() -> Iterator[None]:
    """Within the block, AssumeRole into another account follows the role's trust policy."""
    STSBackend.assume_role = _assume_role  # type: ignore[method-assign]
    TokenResponse.assume_role = _assume_role_response  # type: ignore[method-assign]
    try:
        yield
    finally:
        STSBackend.assume_role = _original  # type: ignore[method-assign]
        TokenResponse.assume_role = _original_response  # type: ignore[method-assign]
