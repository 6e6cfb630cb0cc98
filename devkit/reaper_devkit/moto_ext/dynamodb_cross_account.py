"""DynamoDB data-plane calls on a table in another account, by the table's ARN: moto 5.2.5 looks the
table up in the caller's own account only (ResourceNotFoundException), and stores a table's
resource-based policy without ever reading it.

AWS: "The table name parameter in the DynamoDB data plane and control plane APIs accept complete
Amazon Resource Name (ARN) of the table to support cross-account operations. If you only provide the
table name parameter instead of a complete ARN, the API operation will be performed on the table in
the account to which the requestor belongs."
https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/rbac-cross-account-access.html
and access from another account needs the table's resource-based policy to allow it (plus the
caller's own identity policy, which moto does not evaluate).

Patched here: a call whose TableName is the ARN of a table in another account runs against that
account's table when the table's resource policy has an Allow statement for the action
(`dynamodb:<Operation>` or `dynamodb:*`), for Principal "*" or the caller's account, whose conditions
all hold. Conditions read: `StringEquals` on `aws:PrincipalOrgID` (the caller's organisation in
moto's Organizations) and `aws:PrincipalAccount`, and `ForAllValues:StringEquals` on
`dynamodb:LeadingKeys` (the partition key values of the request: `Key` or `Item`), with
`${aws:PrincipalAccount}` substituted ("Variables can be used in identity-based policies, resource
policies, ...", https://docs.aws.amazon.com/IAM/latest/UserGuide/reference_policies_variables.html).
Any other condition makes the statement not apply (the kit refuses what it cannot judge), and so
does a LeadingKeys condition on a request without a key the kit can read (Query, Scan: stricter
than AWS, which evaluates the key condition of a Query). Refused: AccessDeniedException (the form
is this kit's assumption). Patched on the response class, so it works in-process and in server mode.
"""

from __future__ import annotations

import json
from typing import Any

from moto.core.exceptions import JsonRESTError
from moto.dynamodb.models import DynamoDBBackend, dynamodb_backends
from moto.dynamodb.responses import DynamoHandler

from reaper_devkit.moto_ext.events_cross_account import _org_of

_original = DynamoHandler.dynamodb_backend


def _listed(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _leading_keys(table: Any, body: dict[str, Any]) -> list[str] | None:
    key = body.get("Key") or body.get("Item")
    if not isinstance(key, dict) or table.hash_key_attr not in key:
        return None
    return [str(next(iter(key[table.hash_key_attr].values())))]


def _conditions_hold(condition: dict[str, Any], caller: str, leading: list[str] | None) -> bool:
    context = {"aws:principalorgid": _org_of(caller), "aws:principalaccount": caller}
    for operator, tests in condition.items():
        for key, wanted in tests.items():
            values = [str(w).replace("${aws:PrincipalAccount}", caller) for w in _listed(wanted)]
            name = key.lower()
            if operator == "StringEquals" and name in context:
                if context[name] not in values:
                    return False
            elif operator == "ForAllValues:StringEquals" and name == "dynamodb:leadingkeys":
                if leading is None or any(v not in values for v in leading):
                    return False
            else:
                return False  # a condition the kit cannot judge: the statement does not apply
    return True


def _allows(policy: dict[str, Any], action: str, caller: str, leading: list[str] | None) -> bool:
    for stmt in policy.get("Statement", []):
        if stmt.get("Effect") != "Allow" or not ({action, "dynamodb:*"} & set(_listed(stmt.get("Action")))):
            continue
        principal = stmt.get("Principal")
        names = _listed(principal.get("AWS") if isinstance(principal, dict) else principal)
        if not any(p in ("*", caller, f"arn:aws:iam::{caller}:root") for p in names):
            continue
        if _conditions_hold(stmt.get("Condition") or {}, caller, leading):
            return True
    return False


def _backend(self: DynamoHandler) -> DynamoDBBackend:
    body = getattr(self, "body", None)
    name = str(body.get("TableName") or "") if isinstance(body, dict) else ""
    parts = name.split(":")
    if not (name.startswith("arn:") and len(parts) > 5 and parts[4] != self.current_account):
        return _original.fget(self)  # type: ignore[no-any-return, attr-defined]
    owner = dynamodb_backends[parts[4]][parts[3]]
    table = owner.get_table(name)  # ResourceNotFoundException, as for a table of one's own
    found = owner.resource_policies.get(table.table_arn)
    action = f"dynamodb:{self._get_action()}"
    assert isinstance(body, dict)
    if found is None or not _allows(json.loads(found.policy_doc), action, self.current_account, _leading_keys(table, body)):
        raise JsonRESTError(
            "AccessDeniedException",
            f"User: arn:aws:iam::{self.current_account}:root is not authorized to perform: {action} on resource: {name}"
            " because no resource-based policy allows the action",
        )
    return owner


def apply() -> None:
    DynamoHandler.dynamodb_backend = property(_backend)  # type: ignore[method-assign, assignment]
