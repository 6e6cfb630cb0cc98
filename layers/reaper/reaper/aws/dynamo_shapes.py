"""The DynamoDB request shapes the action log builds, typed (botocore takes and gives plain dicts).

From the DynamoDB API reference: an attribute value is one of its data types by key
(https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_AttributeValue.html); a
TransactWriteItems item is one of Put, Delete, Update or ConditionCheck
(https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItem.html), each with its
table, its item or key, and an optional condition with its names and values
(API_Put.html, API_Delete.html). Only what reaper.record.actionlog writes or reads is named here.
"""

from __future__ import annotations

from typing import TypedDict


class AttributeValue(TypedDict, total=False):
    S: str
    N: str  # a number, sent as a string
    B: bytes
    BOOL: bool
    NULL: bool
    L: list[AttributeValue]
    M: dict[str, AttributeValue]


Item = dict[str, AttributeValue]  # an item, a key, or expression attribute values: name -> value


class Put(TypedDict, total=False):
    TableName: str
    Item: Item
    ConditionExpression: str
    ExpressionAttributeNames: dict[str, str]
    ExpressionAttributeValues: Item


class Delete(TypedDict, total=False):
    TableName: str
    Key: Item
    ConditionExpression: str
    ExpressionAttributeNames: dict[str, str]
    ExpressionAttributeValues: Item


class TransactItem(TypedDict, total=False):
    Put: Put
    Delete: Delete


class Query(TypedDict, total=False):
    TableName: str
    KeyConditionExpression: str
    ExpressionAttributeValues: Item
    ConsistentRead: bool
    Limit: int
    ScanIndexForward: bool
    ExclusiveStartKey: Item
