"""GetResources pages as AWS sizes them: by ResourcesPerPage, and by tags only when TagsPerPage is given.

AWS's API reference (https://docs.aws.amazon.com/resourcegroupstagging/latest/APIReference/API_GetResources.html)
documents ResourcesPerPage as "the maximum number of results to be returned in each page" (1 to 100)
and TagsPerPage as a limit that applies when "the specified TagsPerPage" would split a resource,
adding "Amazon Web Services recommends using ResourcesPerPage instead of this parameter". moto 5
applies TagsPerPage=100 even when the caller did not send it, so a page of resources with three tags
each ended after 33 resources: the notebook sweep's tag pages came back three times as many as AWS
sends. Here the tag limit applies only when the request names it (moto's range check is kept then).
"""

from __future__ import annotations

import sys
import threading
from typing import Any

from moto.resourcegroupstaggingapi import models, responses

_request = threading.local()  # server mode answers each request on its own thread


def apply() -> None:
    response_cls = responses.ResourceGroupsTaggingAPIResponse
    if getattr(response_cls, "_reaper_tag_pages", False):
        return
    original_response = response_cls.get_resources
    original_backend = models.ResourceGroupsTaggingAPIBackend.get_resources

    def get_resources(self: Any) -> Any:
        _request.tags_per_page_given = self._get_param("TagsPerPage") is not None
        try:
            return original_response(self)
        finally:
            _request.tags_per_page_given = True

    def backend_get_resources(self: Any, *args: Any, **kwargs: Any) -> Any:
        if not getattr(_request, "tags_per_page_given", True):
            kwargs["tags_per_page"] = sys.maxsize
        return original_backend(self, *args, **kwargs)

    response_cls.get_resources = get_resources
    models.ResourceGroupsTaggingAPIBackend.get_resources = backend_get_resources
    response_cls._reaper_tag_pages = True
