"""``[tool.recovery-lint]`` in pyproject.toml, or a ``.recovery-lint.toml``, found from the linted
path upwards and validated against ``schemas/config.schema.json``."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from .jobs import JobSpec
from .record import Record, field

CONFIG_FILES = (".recovery-lint.toml", "recovery-lint.toml", "pyproject.toml")
FAIL_ON = ("error", "warning", "info")


class ConfigError(Exception):
    """A configuration problem; the message names the file and the key."""


class Config(Record):
    path: Path | None = None
    root: Path | None = None  # the folder of the config file: base of relative paths
    select: list[str] | None = None
    ignore: list[str] = field(default_factory=list)
    extend_select: list[str] = field(default_factory=list)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)
    exclude: list[str] = field(default_factory=list)
    force_exclude: bool = False  # exclude also the paths passed on the command line
    versions: dict[str, str] = field(default_factory=dict)
    jobs: list[JobSpec] = field(default_factory=list)
    fail_on: str = "warning"
    ranktable_host_root: str | None = None  # Ascend Operator's rank-table directory on the hosts, when configured
    target: dict[str, object] = field(default_factory=dict)  # platform, nodes, mindcluster (see premises.py)
    raw: dict[str, object] = field(default_factory=dict)

    def fingerprint(self) -> str:
        return json.dumps(self.raw, sort_keys=True, default=str)


def _toml():
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib
    return tomllib


def find_config(start: Path) -> Path | None:
    here = start if start.is_dir() else start.parent
    for folder in [here, *here.parents]:
        for name in CONFIG_FILES:
            candidate = folder / name
            if candidate.is_file():
                if name == "pyproject.toml" and not _has_section(candidate):
                    continue
                return candidate
    return None


def _has_section(pyproject: Path) -> bool:
    try:
        return "[tool.recovery-lint" in pyproject.read_text("utf-8", "replace")
    except OSError:
        return False


def load_config(path: Path) -> Config:
    try:
        text = path.read_text("utf-8")
        data = _toml().loads(text)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from exc
    except (ValueError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from exc
    section = _section(data, path)
    try:
        config = config_from_dict(section, path.absolute())
    except ConfigError as exc:
        raise ConfigError(_located(exc, path, text)) from None
    _check_versions(config.versions, _shown(path), text)
    return config


def _shown(path: Path) -> Path:
    """The path as a message shows it: relative to the working directory when below it."""
    try:
        return path.absolute().relative_to(Path.cwd())
    except ValueError:
        return path


def _section(data: dict, path: Path) -> dict:
    """A pyproject.toml, or any file with a ``[tool.recovery-lint]`` table (pyproject form, also
    when passed with --config under another name), holds the settings in that table; a
    .recovery-lint.toml holds them at the top level."""
    tool = data.get("tool")
    if path.name == "pyproject.toml" or (isinstance(tool, dict) and "recovery-lint" in tool):
        section = tool.get("recovery-lint", {}) if isinstance(tool, dict) else {}
        return section if isinstance(section, dict) else {}
    return data


def _check_versions(versions: dict[str, str], path: Path, text: str) -> None:
    """A configured version must be readable: it stands in for a pin, and an unreadable one would
    silently turn every version-dependent rule into a guess. Reported where it is written."""
    if not versions:
        return
    from .knowledge import version_problem

    for component, value in versions.items():
        expected = version_problem(component, value)
        if expected:
            line = _line_of(text, component, value)
            where = f"{path}:{line}" if line else str(path)
            raise ConfigError(f"{where}: invalid value for 'versions.{component}': '{value}' ({expected})")


def _line_of(text: str, key: str, value: object | None = None) -> int | None:
    """The 1-based line where ``key`` is set (to ``value``, when given) in TOML text; tomllib keeps
    no positions, so the text is searched: a bare or quoted key followed by '='."""
    pattern = rf"(?:^|[\s{{,])[\"']?{re.escape(key)}[\"']?\s*="
    if isinstance(value, str):
        pattern += rf"\s*[\"']{re.escape(value)}[\"']"
    match = re.search(pattern, text, re.MULTILINE)
    if match is None:
        return None
    return text.count("\n", 0, match.end()) + 1


def _located(exc: ConfigError, path: Path, text: str) -> str:
    """The error with the line of the key it names, when the key can be found."""
    message = str(exc)
    key = re.search(r"'([^']+)'", message)
    line = _line_of(text, key.group(1).rsplit(".", 1)[-1]) if key else None
    prefix = f"{path.absolute()}: "
    if line and message.startswith(prefix):
        return f"{_shown(path)}:{line}: {message[len(prefix) :]}"
    return message.replace(str(path.absolute()), str(_shown(path)), 1)


def _schema() -> dict:
    from .schemas import read_json

    return read_json("config.schema.json")


def validate(section: dict, where: str) -> None:
    if not section:
        return
    import jsonschema

    validator = jsonschema.Draft202012Validator(_schema())
    errors = sorted(validator.iter_errors(section), key=lambda e: list(e.absolute_path))
    if errors:
        err = errors[0]
        key = ".".join(str(p) for p in err.absolute_path) or "(top level)"
        if err.validator == "additionalProperties":
            extra = sorted(set(err.instance) - set(err.schema.get("properties", {})))
            key = ".".join([*map(str, err.absolute_path), extra[0]]) if extra else key
            raise ConfigError(f"{where}: unknown key '{key}'")
        raise ConfigError(f"{where}: invalid value for '{key}': {err.message}")


def config_from_dict(section: dict, path: Path | None) -> Config:
    where = str(path) if path else "configuration"
    validate(section, where)
    jobs = [
        JobSpec(manifest=j["manifest"], scripts=list(j.get("scripts", [])), entry=j.get("entry"))
        for j in section.get("jobs", [])
    ]
    return Config(
        path=path,
        root=path.parent if path else None,
        select=list(section["select"]) if "select" in section else None,
        ignore=list(section.get("ignore", [])),
        extend_select=list(section.get("extend-select", [])),
        per_file_ignores={k: list(v) for k, v in section.get("per-file-ignores", {}).items()},
        exclude=list(section.get("exclude", [])),
        force_exclude=bool(section.get("force-exclude", False)),
        versions=dict(section.get("versions", {})),
        jobs=jobs,
        fail_on=section.get("fail-on", "warning"),
        ranktable_host_root=section.get("ranktable-host-root"),
        target=dict(section.get("target", {})),
        raw=section,
    )


def cluster_settings(config: Config) -> dict[str, str]:
    """The configuration's facts about the cluster, as the jobs' context carries them."""
    settings = {"ranktable-host-root": config.ranktable_host_root} if config.ranktable_host_root else {}
    for key, value in config.target.items():
        settings[f"target.{key}"] = str(value).lower() if isinstance(value, bool) else str(value)
    return settings
