"""``[tool.recovery-lint]`` in pyproject.toml, or a ``.recovery-lint.toml``, found from the linted
path upwards and validated against ``schemas/config.schema.json``."""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

CONFIG_FILES = (".recovery-lint.toml", "recovery-lint.toml", "pyproject.toml")
FAIL_ON = ("error", "warning", "info")


class ConfigError(Exception):
    """A configuration problem; the message names the file and the key."""


@dataclass
class JobSpec:
    """An explicit link from config: ``[[tool.recovery-lint.jobs]]``."""

    manifest: str
    scripts: list[str] = field(default_factory=list)
    entry: str | None = None


@dataclass(eq=False, repr=False)
class Config:
    """The effective configuration of a run: the config file's settings merged with the command line."""

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
    documentation_url: str | None = None  # where docs/rules.md is published (SARIF helpUri, informationUri)
    target: dict[str, object] = field(default_factory=dict)  # platform, nodes, mindcluster (see premises.py)
    raw: dict[str, object] = field(default_factory=dict)

    def fingerprint(self) -> str:
        import json

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
        raise ConfigError(f"{_shown(path)}: cannot read: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{_shown(path)}: not UTF-8 text (byte {exc.start})") from exc
    except ValueError as exc:  # tomllib.TOMLDecodeError: "Invalid value (at line 1, column 9)"
        raise ConfigError(_toml_error(_shown(path), str(exc))) from exc
    except RecursionError:  # arrays or tables nested thousands deep: no configuration is shaped so
        raise ConfigError(f"{_shown(path)}: nested too deeply to read") from None
    section = _section(data, path)
    try:
        config = config_from_dict(section, path.absolute())
    except ConfigError as exc:
        raise ConfigError(_located(exc, path, text)) from None
    _check_versions(config.versions, _shown(path), text)
    _check_selectors(config, _shown(path), text)
    return config


def _toml_error(shown: Path, message: str) -> str:
    """A TOML syntax error as the other configuration errors read: ``FILE:LINE:COLUMN: invalid TOML: ...``."""
    at = re.search(r"\s*\(at line (\d+), column (\d+)\)$", message)
    if at:
        return f"{shown}:{at.group(1)}:{at.group(2)}: invalid TOML: {message[: at.start()].lower()}"
    end = re.search(r"\s*\(at end of document\)$", message)
    if end:
        return f"{shown}: invalid TOML at the end of the file: {message[: end.start()]}"
    return f"{shown}: invalid TOML: {message}"


def _check_selectors(config: Config, path: Path, text: str) -> None:
    """A rule selector of the configuration that names no rule, reported where it is written."""
    from .registry import is_known_selector

    lists = {"select": config.select or [], "ignore": config.ignore, "extend-select": config.extend_select}
    lists.update({f"per-file-ignores.{k}": v for k, v in config.per_file_ignores.items()})
    for key, selectors in lists.items():
        for selector in selectors:
            if not is_known_selector(selector):
                line = _line_of(text, selector.split(".")[-1]) or _line_of(text, key.split(".")[0])
                where = f"{path}:{line}" if line else str(path)
                raise ConfigError(
                    f"{where}: invalid value for '{key}': unknown rule selector '{selector}' "
                    "(expected a code, a code prefix or a name: see 'recovery-lint rule --all')"
                )


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
    from .knowledge.releases import version_problem

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


def _line_of_table(text: str, key: str) -> int | None:
    """The line of ``[key]`` / ``[[key]]`` (or ``[tool.recovery-lint.key]``), where a table's error is."""
    match = re.search(rf"^\s*\[\[?\s*(?:tool\.recovery-lint\.)?{re.escape(key)}\s*\]", text, re.MULTILINE)
    return text.count("\n", 0, match.start()) + 1 if match else None


def _located(exc: ConfigError, path: Path, text: str) -> str:
    """The error with the line of the key it names, when the key can be found."""
    message = str(exc)
    key = re.search(r"'([^']+)'", message)
    line = None
    if key:
        name = re.sub(r"\[\d+\]", "", key.group(1))  # jobs[1].manifest -> jobs.manifest
        line = _line_of(text, name.rsplit(".", 1)[-1]) or _line_of_table(text, name.split(".", 1)[0])
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
    errors = sorted(validator.iter_errors(section), key=lambda e: [str(p) for p in e.absolute_path])
    if errors:
        err = errors[0]
        key = _key_name(err.absolute_path) or "(top level)"
        if err.validator == "additionalProperties":
            known = list(err.schema.get("properties", {}))
            extra = sorted(set(err.instance) - set(known))
            key = _key_name([*err.absolute_path, extra[0]]) if extra else key
            close = _closest(extra[0], known) if extra else None
            hint = f"; did you mean '{_key_name([*err.absolute_path, close])}'?" if close else ""
            raise ConfigError(f"{where}: unknown key '{key}'{hint}")
        if err.validator == "required":
            missing = re.search(r"'([^']+)' is a required property", err.message)
            raise ConfigError(f"{where}: '{key}' needs the key '{missing.group(1) if missing else err.message}'")
        raise ConfigError(f"{where}: invalid value for '{key}': {_expected(err)}")


def _closest(key: str, known: list[str]) -> str | None:
    """The known key an unknown one most likely meant (``fail_on``: ``fail-on``; ``platfrom``:
    ``platform``), or None."""
    import difflib

    spelled = {k.replace("-", "_"): k for k in known}
    return spelled.get(key.replace("-", "_")) or next(
        iter(difflib.get_close_matches(key, known, n=1, cutoff=0.75)), None
    )


def _key_name(path) -> str:
    """A key path as TOML writes it: ``jobs[1].manifest``, ``per-file-ignores.legacy/*`` (1-based items)."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part + 1}]"
        else:
            out += f".{part}" if out else str(part)
    return out


_PATTERN_NAMES = {
    "^/": "an absolute path, starting with /",
    "^(ALL|RL[0-9]{0,3}|[a-z][a-z0-9-]*)$": "a rule code (RL301), a code prefix (RL3), a rule name or ALL",
}
_TYPE_NAMES = {
    "array": "a list",
    "string": "a string",
    "object": "a table",
    "integer": "a whole number",
    "boolean": "true or false",
}


def _expected(err) -> str:
    """A schema violation in the words the other configuration errors use: the value, then what was
    expected."""
    value = err.instance
    import json

    shown = f"'{value}'" if isinstance(value, str) else json.dumps(value)
    kind = err.validator
    if kind == "type":
        want = err.validator_value
        names = [_TYPE_NAMES.get(w, w) for w in (want if isinstance(want, list) else [want])]
        return f"{shown} (expected {' or '.join(names)})"
    if kind == "enum":
        return f"{shown} (expected one of {', '.join(repr(v) for v in err.validator_value)})"
    if kind == "minimum":
        return f"{shown} (expected at least {err.validator_value})"
    if kind == "pattern":
        return f"{shown} (expected {_PATTERN_NAMES.get(err.validator_value, 'a value of the documented form')})"
    if kind == "minLength":
        return f"{shown} (expected a value that is not empty)"
    return f"{shown} ({err.message})"


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
        documentation_url=section.get("documentation-url"),
        target=dict(section.get("target", {})),
        raw=section,
    )


def with_command_line(config: Config, target: list[str] | None, versions: list[str] | None) -> Config:
    """The configuration with ``--target`` and ``--versions`` laid over its tables: what the command
    line says wins, key by key; checked as the file's keys are (one schema, one version check)."""
    if not target and not versions:
        return config
    section: dict[str, object] = {}
    if target:
        section["target"] = {key: _typed("target", key, value) for key, value in _pairs("--target", target)}
    if versions:
        section["versions"] = dict(_pairs("--versions", versions))
    try:
        validate(section, "the command line")
    except ConfigError as exc:
        raise ConfigError(
            str(exc)
            .replace("the command line: ", "", 1)
            .replace("'target.", "'--target ")
            .replace("'versions.", "'--versions ")
        ) from None
    for component, value in section.get("versions", {}).items():  # type: ignore[union-attr]
        from .knowledge.releases import version_problem

        expected = version_problem(component, value)
        if expected:
            raise ConfigError(f"invalid value for '--versions {component}': '{value}' ({expected})")
    raw = {**config.raw}
    for table in ("target", "versions"):
        if table in section:
            raw[table] = {**dict(config.raw.get(table, {})), **section[table]}  # type: ignore[arg-type]
    config.target = {**config.target, **section.get("target", {})}  # type: ignore[arg-type]
    config.versions = {**config.versions, **section.get("versions", {})}  # type: ignore[arg-type]
    config.raw = raw
    return config


def _pairs(option: str, given: list[str]) -> list[tuple[str, str]]:
    """``KEY=VALUE`` pairs from each comma-separated argument of an option."""
    pairs = []
    for argument in given:
        for item in filter(None, (part.strip() for part in argument.split(","))):
            key, sign, value = item.partition("=")
            if not sign or not key.strip() or not value.strip():
                raise ConfigError(f"{option} takes KEY=VALUE pairs, not '{item}'")
            pairs.append((key.strip(), value.strip()))
    return pairs


def _typed(table: str, key: str, value: str) -> object:
    """A command-line value as the schema types the key (integers and booleans of ``[target]``)."""
    kind = _schema()["properties"][table]["properties"].get(key, {}).get("type")
    if kind == "integer" and value.lstrip("-").isdigit():
        return int(value)
    if kind == "boolean" and value.lower() in ("true", "false"):
        return value.lower() == "true"
    return value


def cluster_settings(config: Config) -> dict[str, str]:
    """The configuration's facts about the cluster, as the jobs' context carries them."""
    settings = {"ranktable-host-root": config.ranktable_host_root} if config.ranktable_host_root else {}
    for key, value in config.target.items():
        settings[f"target.{key}"] = str(value).lower() if isinstance(value, bool) else str(value)
    return settings
