"""The registry of kinds: one package each, `reaper/kinds/<kind>/`, whose `__init__.py` declares it.

Adding a kind: its package, its template statements, an event fixture and its tests. A kind's parts
are imported on first use: a function that sweeps one kind does not pay, at cold start, for the others.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping

from reaper.core.errors import UsageError
from reaper.core.kind_names import KIND_PACKAGES as KIND_PACKAGES
from reaper.core.settings import ENV_VARS, KindSettings, Settings
from reaper.kinds.base import Kind, KindDeclaration

# the kinds with settings of their own (kinds/<kind>/settings.py: module, model); the rest read only the shared ones
KIND_SETTINGS: dict[str, tuple[str, str]] = {
    "notebook": ("reaper.kinds.notebook.settings", "NotebookSettings"),
    "endpoint": ("reaper.kinds.endpoint.settings", "EndpointSettings"),
    "training-job": ("reaper.kinds.training_job.settings", "TrainingJobSettings"),
    "fsx": ("reaper.kinds.fsx.settings", "FsxSettings"),
    "studio-app": ("reaper.kinds.studio_app.settings", "StudioAppSettings"),
    "ec2": ("reaper.kinds.ec2.settings", "Ec2Settings"),
    "bedrock-pt": ("reaper.kinds.bedrock_pt.settings", "BedrockPtSettings"),
    "mlflow": ("reaper.kinds.mlflow.settings", "MlflowSettings"),
    "storage": ("reaper.kinds.storage.settings", "StorageSettings"),
}
_loaded: dict[str, Kind] = {}


def declaration(name: str) -> KindDeclaration:
    decl: KindDeclaration = importlib.import_module(KIND_PACKAGES[name]).DECLARATION
    if decl.name != name:
        raise RuntimeError(f"{KIND_PACKAGES[name]} declares kind {decl.name!r}, registered as {name!r}")
    return decl


class _Registry(Mapping[str, Kind]):
    """{name: Kind}, reading each kind's declaration when it is first asked for."""

    def __getitem__(self, name: str) -> Kind:
        if name not in _loaded:
            _loaded[name] = Kind(declaration(name))
        return _loaded[name]

    def __iter__(self) -> Iterator[str]:
        return iter(KIND_PACKAGES)

    def __len__(self) -> int:
        return len(KIND_PACKAGES)


REGISTRY: Mapping[str, Kind] = _Registry()


def get(name: str) -> Kind:
    if name not in KIND_PACKAGES:
        raise UsageError(f"unknown kind {name!r} (available: {', '.join(sorted(KIND_PACKAGES))})")
    return REGISTRY[name]


def all_kinds() -> list[Kind]:
    return [REGISTRY[name] for name in KIND_PACKAGES]


def settings_models() -> dict[str, type[KindSettings]]:
    """{kind: its own settings model}, for the kinds that have one (a small module beside the declaration)."""
    models: dict[str, type[KindSettings]] = {}
    for name, (module, model) in KIND_SETTINGS.items():
        found = getattr(importlib.import_module(module), model)
        if not (isinstance(found, type) and issubclass(found, KindSettings)):
            raise RuntimeError(f"{module}.{model} is not a KindSettings")
        models[name] = found
    return models


def check_settings(settings: Settings) -> Settings:
    """Every kind's own settings read now (at cold start): a bad value fails loudly, naming its variable."""
    for model in settings_models().values():
        settings.of(model)
    return settings


def setting_of(settings: Settings, variable: str) -> object:
    """The value of the setting a REAPER_* variable sets, in the shared Settings or in the one kind's own model
    that reads it (`reaper coverage` names an opt-in by its variable: it need not know where the field lives)."""
    if variable in ENV_VARS:
        return getattr(settings, ENV_VARS[variable])
    for model in settings_models().values():
        if variable in model.ENV_VARS:
            return getattr(settings.of(model), model.ENV_VARS[variable])
    raise KeyError(f"{variable} is read by no settings model")
