"""Ignore rules: git lists what a work tree tracks and does not ignore; without git, each path is
matched against the ignore files of its own ancestors with git's semantics. git itself is the oracle."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from recovery_lint import discover as discover_module
from recovery_lint import gitlisting
from recovery_lint.discover import discover
from recovery_lint.ignore import IgnoreFile, parse_ignore_lines
from recovery_lint.kinds import classify

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))
from zoo import write_gitignore_repro  # noqa: E402

GIT = shutil.which("git")
needs_git = pytest.mark.skipif(GIT is None, reason="git is not installed")


def git(repo: Path, *args: str, stdin: str | None = None) -> str:
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull)
    identity = ["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "protocol.file.allow=always"]
    argv = [GIT or "git", *identity, *args]
    return subprocess.run(argv, cwd=repo, env=env, input=stdin, capture_output=True, text=True, check=True).stdout


def write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode("utf-8"))


def linted(root: Path, via: str, *paths: Path, tracked_only: bool = False) -> set[str]:
    """What discover() lists below root (or for ``paths``). ``via``: "git" (and git must have answered),
    "patterns" (git unavailable), or "fallback" (git is there but must not have answered)."""
    answers: list[object] = []

    def recorded(*args: Path) -> object:
        answers.append(real(*args))
        return answers[-1]

    real = gitlisting.git_listing
    with pytest.MonkeyPatch.context() as patch:
        if via == "patterns":
            patch.setattr(gitlisting, "git_program", lambda: None)
        patch.setattr(gitlisting, "git_listing", recorded)
        found = {c.display for c in discover(list(paths) or [root], root, tracked_only=tracked_only)[0]}
    # a listing answers once its untracked part came too (git lists that part while we read the rest)
    answered = [a is not None and a.finish() for a in answers]
    if via == "git":
        assert answers and all(answered), "git did not answer"
    elif via == "fallback":
        assert answers and not any(answered), "git answered"
    return found


def git_oracle(repo: Path, *extra: str) -> set[str]:
    """What git lists, limited to the names the linter reads at all."""
    out = git(repo, "ls-files", "--others", "--exclude-standard", "-z", *extra)
    return {p for p in out.split("\0") if p and classify(p.rsplit("/", 1)[-1]) and (repo / p).is_file()}


# One case per folder: the folder's .gitignore holds the patterns, and every folder holds the same paths.
PATHS = [
    "x.py",
    "a.py",
    "b.py",
    "c.py",
    "foo.py",
    "foo/x.py",
    "a/foo.py",
    "a/b/foo.py",
    "a/b/c.py",
    "a/x/b/c.py",
    "a/bb/c.py",
    "doc/frotz/x.py",
    "sub/doc/frotz/x.py",
    "build/out.py",
    "build/keep.py",
    "build/deep/keep.py",
    "src/build/out.py",
    "#hash.py",
    "!bang.py",
    "sp.py ",
    "[ab].py",
    "deep/1/2/3/x.py",
    "deep/1/x.py",
    "7/x.py",
    "run.sh",
    "job.yaml",
    "requirements.txt",
]
CASES = [
    "foo.py",
    "foo",
    "foo/",
    "/foo.py",
    "a/foo.py",
    "/a/b",
    "a/**/c.py",
    "**/foo.py",
    "**/b",
    "**/b/",
    "a/**",
    "doc/frotz/",
    "doc/frotz",
    "*.py\n!*/\n!x.py",
    "?.py",
    "[ab].py",
    "[!ab].py",
    "[^ab].py",
    "[a-b].py",
    "[b-a].py",
    "\\[ab\\].py",
    "[]ab].py",
    "[[:digit:]]/",
    "[[:alpha:]].py",
    "[ab",
    "\\#hash.py",
    "#hash.py",
    "\\!bang.py",
    "!bang.py",
    "sp.py ",
    "sp.py\\ ",
    "deep/**/x.py",
    "deep/*/x.py",
    "deep/**/2",
    "**",
    "/**",
    "a/b**",
    "a**",
    "*/foo.py",
    "/*/foo.py",
    "build/\n!build/keep.py",
    "build/*\n!build/keep.py",
    "build/**\n!build/keep.py\n!build/deep/\n!build/deep/keep.py",
    "build\n!build/",
    "foo/**/",
    "a/b/",
    "a/*/c.py",
    "a/b/c.py\r\nx.py\r",
    "*\n!*/\n!*.sh",
    "*.yaml\n!job.yaml\njob.yaml",
    "requirements.*",
    "x.py\\",
    "**/doc/**/x.py",
    "*o*o*.py",
    "f*o*.py",
    "*b*/*.py",
    "**/*b*/c.py",
    "a/*b*/*.py",
    "*.*",
]


def build_case_tree(root: Path) -> None:
    for index, patterns in enumerate(CASES):
        case = root / f"case{index:02d}"
        write(case, {rel: "x = 1\n" for rel in PATHS})
        (case / ".gitignore").write_bytes(patterns.encode("utf-8") + b"\n")
    write(
        root,
        {
            # nested files override their ancestors; info/exclude yields to every .gitignore
            ".gitignore": "*.gen.py\n/top_only.py\nlogs/\n!info_reincluded.py\n",
            "top_only.py": "",
            "nested/top_only.py": "",
            "nested/keep.gen.py": "",
            "nested/drop.gen.py": "",
            "nested/.gitignore": "!keep.gen.py\n/local.py\n",
            "nested/local.py": "",
            "nested/deeper/local.py": "",
            "nested/deeper/.gitignore": "*.py\n!important.py\n",
            "nested/deeper/important.py": "",
            "nested/deeper/other.py": "",
            "nested/deeper/run.sh": "",
            "logs/run.sh": "",
            "logs/.gitignore": "!run.sh\n",
            "info_excluded.py": "",
            "info_reincluded.py": "",
            "nested/info_excluded.py": "",
        },
    )
    (root / ".git" / "info").mkdir(parents=True, exist_ok=True)
    (root / ".git" / "info" / "exclude").write_text("info_excluded.py\ninfo_reincluded.py\n")


@pytest.fixture(scope="module")
def case_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if GIT is None:
        pytest.skip("git is not installed")
    root = tmp_path_factory.mktemp("cases")
    git(root, "init", "-q")
    build_case_tree(root)
    return root


@needs_git
def test_the_pattern_matcher_agrees_with_git_on_every_case(case_repo):
    expected = git_oracle(case_repo)
    got = linted(case_repo, "patterns")
    for index, patterns in enumerate(CASES):  # one message per case that disagrees
        prefix = f"case{index:02d}/"
        want = {p for p in expected if p.startswith(prefix)}
        have = {p for p in got if p.startswith(prefix)}
        assert have == want, f"patterns {patterns!r}: extra {sorted(have - want)}, missing {sorted(want - have)}"
    assert got == expected


@needs_git
def test_asking_git_gives_what_git_lists(case_repo):
    assert linted(case_repo, "git") == git_oracle(case_repo)


@needs_git
def test_the_matcher_agrees_with_git_check_ignore_path_by_path(case_repo):
    """Each case folder's .gitignore asked about every file and folder inside it; a path inside an
    ignored folder is ignored whatever its own lines say."""
    queries, ours = [], []
    for index in range(len(CASES)):
        case = case_repo / f"case{index:02d}"
        ignore_file = IgnoreFile.read(case / ".gitignore")
        for path in sorted(case.rglob("*")):
            rel = path.relative_to(case).as_posix()
            if rel != ".gitignore":
                queries.append(path.relative_to(case_repo).as_posix())
                ours.append(ignore_file is not None and ignored_with_parents(ignore_file, rel, path.is_dir()))
    # -v -n: source, line, pattern and path of every query; an empty source when no line matches
    fields = git(case_repo, "check-ignore", "--no-index", "-v", "-n", "-z", "--stdin", stdin="\0".join(queries))
    fields = fields.split("\0")
    theirs = {}
    for i in range(0, len(fields) - 3, 4):
        source, _line, pattern, path = fields[i : i + 4]
        theirs[path] = bool(source) and not pattern.startswith("!")
    wrong = [(q, o) for q, o in zip(queries, ours, strict=True) if theirs[q] != o]
    assert not wrong, wrong[:20]


def ignored_with_parents(ignore_file: IgnoreFile, rel: str, is_dir: bool) -> bool:
    parts = rel.split("/")
    for depth in range(1, len(parts)):
        if ignore_file.verdict("/".join(parts[:depth]), parts[depth - 1], True):
            return True
    return bool(ignore_file.verdict(rel, parts[-1], is_dir))


@needs_git
def test_tracked_files_in_ignored_folders_count_and_deleted_ones_do_not(tmp_path):
    write(
        tmp_path,
        {".gitignore": "build/\n", "build/tracked.py": "", "build/untracked.py": "", "gone.py": "", "a.py": ""},
    )
    git(tmp_path, "init", "-q")
    git(tmp_path, "add", "-f", "build/tracked.py", "gone.py", "a.py")
    (tmp_path / "gone.py").unlink()  # still in the index
    assert linted(tmp_path, "git") == {"a.py", "build/tracked.py"}


def committed(root: Path, files: dict[str, str]) -> Path:
    """A repository at ``root`` holding ``files`` in one commit (what a submodule is added from)."""
    write(root, files)
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-qm", "files")
    return root


@needs_git
def test_submodules_and_nested_clones_are_listed_by_their_own_git(tmp_path):
    upstream = committed(tmp_path / "upstream", {"lib.py": "", "gen.py": "", ".gitignore": "gen.py\n"})
    repo = tmp_path / "repo"
    write(repo, {".gitignore": "lib.py\n", "main.py": ""})
    git(repo, "init", "-q")
    git(repo, "submodule", "add", "-q", str(upstream), "vendored")
    write(repo / "clone", {"tool.py": "", "skip.py": "", ".gitignore": "skip.py\n"})
    git(repo / "clone", "init", "-q")
    expected = {"main.py", "vendored/lib.py", "clone/tool.py"}  # the outer 'lib.py' rule stops at each repository
    assert linted(repo, "git") == expected


@needs_git
def test_tracked_only_lists_what_git_tracks_in_submodules_too(tmp_path):
    upstream = committed(tmp_path / "upstream", {"lib.py": ""})
    repo = tmp_path / "repo"
    write(repo, {"main.py": "", "draft.py": ""})
    git(repo, "init", "-q")
    git(repo, "add", "main.py")
    git(repo, "submodule", "add", "-q", str(upstream), "vendored")
    write(repo / "vendored", {"scratch.py": ""})  # untracked inside the submodule
    write(repo / "clone", {"tool.py": ""})
    git(repo / "clone", "init", "-q")  # an untracked nested clone: no part of a commit
    assert linted(repo, "git") == {"main.py", "draft.py", "vendored/lib.py", "vendored/scratch.py", "clone/tool.py"}
    assert linted(repo, "git", tracked_only=True) == {"main.py", "vendored/lib.py"}
    named = discover([repo / "draft.py"], repo, tracked_only=True)[0]
    assert [c.display for c in named] == ["draft.py"]  # a file named is linted, tracked or not


@needs_git
def test_paths_named_on_the_command_line_are_linted_even_when_ignored(tmp_path):
    write(tmp_path, {".gitignore": "build/\nskip.py\n", "build/a.py": "", "build/sub/b.py": "", "skip.py": ""})
    git(tmp_path, "init", "-q")
    named = (tmp_path / "build", tmp_path / "skip.py")
    expected = {"build/a.py", "build/sub/b.py", "skip.py"}
    assert linted(tmp_path, "fallback", *named) == expected  # git lists no untracked file in build/
    assert linted(tmp_path, "patterns", *named) == expected


@needs_git
def test_a_folder_below_the_top_gets_the_top_rules(tmp_path):
    write(
        tmp_path,
        {".gitignore": "*.gen.py\n/sub/anchored.py\n", "sub/a.py": "", "sub/b.gen.py": "", "sub/anchored.py": ""},
    )
    git(tmp_path, "init", "-q")
    assert linted(tmp_path, "git", tmp_path / "sub") == {"sub/a.py"}
    assert linted(tmp_path, "patterns", tmp_path / "sub") == {"sub/a.py"}


@needs_git
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_symlinks_and_fifos_are_still_skipped_when_git_lists_them(tmp_path):
    outside = tmp_path / "outside"
    write(outside, {"secret.sh": "", "jobs/train.sh": ""})
    repo = tmp_path / "repo"
    write(repo, {"train.sh": ""})
    (repo / "link.sh").symlink_to(outside / "secret.sh")
    (repo / "jobs").symlink_to(outside / "jobs", target_is_directory=True)
    os.mkfifo(repo / "pipe.yaml")
    git(repo, "init", "-q")
    git(repo, "add", "link.sh", "jobs", "train.sh")
    assert linted(repo, "git") == {"train.sh"}


@needs_git
def test_a_hostile_repository_config_runs_nothing(tmp_path):
    marker = tmp_path / "ran"
    hook = tmp_path / "hook.sh"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\necho '/'\n")
    hook.chmod(0o755)
    repo = tmp_path / "repo"
    write(repo, {"a.py": "", ".gitignore": "b.py\n", "b.py": ""})
    git(repo, "init", "-q")
    git(repo, "add", "a.py")
    with open(repo / ".git" / "config", "a") as config:
        config.write(f"[core]\n\tfsmonitor = {hook}\n\thooksPath = {tmp_path}\n\tworktree = {tmp_path}\n")
    subprocess.run([GIT or "git", "ls-files"], cwd=repo, capture_output=True, check=False)
    assert marker.exists(), "the hook runs when git is asked without protection"
    marker.unlink()
    assert linted(repo, "git") == {"a.py"}
    assert not marker.exists()


@needs_git
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_config_that_blocks_git_times_out_into_the_fallback(tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    write(repo, {"a.py": "", ".gitignore": "b.py\n", "b.py": ""})
    git(repo, "init", "-q")
    os.mkfifo(tmp_path / "excludes")
    with open(repo / ".git" / "config", "a") as config:
        config.write(f"[core]\n\texcludesFile = {tmp_path / 'excludes'}\n")
    monkeypatch.setattr(gitlisting, "GIT_TIMEOUT", 1.0)
    assert linted(repo, "fallback") == {"a.py"}


@needs_git
def test_git_errors_and_foreign_owners_fall_back_to_the_patterns(tmp_path, monkeypatch):
    write(tmp_path, {"a.py": "", ".gitignore": "b.py\n", "b.py": ""})
    (tmp_path / ".git").mkdir()  # not a repository: git fails
    assert linted(tmp_path, "fallback") == {"a.py"}
    shutil.rmtree(tmp_path / ".git")
    git(tmp_path, "init", "-q")
    calls = []
    monkeypatch.setattr(gitlisting, "_run_git", lambda *args: calls.append(args))
    monkeypatch.setattr(os, "geteuid", lambda: os.getuid() + 1)
    assert linted(tmp_path, "fallback") == {"a.py"}
    assert calls == []  # a repository of another user is not asked


def test_git_is_never_looked_up_in_a_relative_path_entry(tmp_path, monkeypatch):
    fake = tmp_path / "git"
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(0o755)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", ".")
    gitlisting.git_program.cache_clear()
    try:
        assert gitlisting.git_program() is None
    finally:
        gitlisting.git_program.cache_clear()


def test_ignore_lines_are_parsed_as_git_parses_them():
    patterns = parse_ignore_lines("\ufeff# comment\n\\#lit\n!neg/\n\\!bang\nsp  \nesc\\ \n/anchored\na/b\n\r\n")
    assert [(p.text, p.negated, p.dir_only, p.basename) for p in patterns] == [
        ("\\#lit", False, False, True),
        ("neg", True, True, True),
        ("\\!bang", False, False, True),
        ("sp", False, False, True),
        ("esc\\ ", False, False, True),
        ("/anchored", False, False, False),
        ("a/b", False, False, False),
    ]


def test_a_line_of_many_stars_does_not_make_matching_exponential():
    ignore_file = IgnoreFile(parse_ignore_lines("*a*a*a*a*a*a*a*a*a*a*b\nx/*a*a*a*a*a*a*a*a*a*a*b\n"))
    name = "a" * 60
    start = time.perf_counter()
    assert ignore_file.verdict(name, name, False) is None
    assert ignore_file.verdict(f"x/{name}", name, False) is None
    assert ignore_file.verdict(f"x/{name}b", f"{name}b", False) is True
    assert time.perf_counter() - start < 1  # backtracking over every split took minutes


def test_a_symlinked_or_special_gitignore_is_not_read(tmp_path):
    write(tmp_path, {"real/.gitignore": "a.py\n", "tree/a.py": "", "tree/b.py": ""})
    (tmp_path / "tree" / ".gitignore").symlink_to(tmp_path / "real" / ".gitignore")
    assert {c.display for c in discover([tmp_path / "tree"], tmp_path / "tree")[0]} == {"a.py", "b.py"}
    if hasattr(os, "mkfifo"):
        (tmp_path / "tree" / ".gitignore").unlink()
        os.mkfifo(tmp_path / "tree" / ".gitignore")  # reading it would wait for a writer forever
        assert {c.display for c in discover([tmp_path / "tree"], tmp_path / "tree")[0]} == {"a.py", "b.py"}


# Random trees and random ignore files, checked against git.

NAMES = st.sampled_from(["a", "b", "ab", "a.py", "b.py", "c.sh", "x.yaml"])
PIECES = st.sampled_from(["a", "b", "*", "?", "**", "a*", "*.py", "[ab]", "[!a]*", "x.yaml", "c.sh", "*a*", "*b*a*"])


@st.composite
def ignore_lines(draw: st.DrawFn) -> str:
    parts = draw(st.lists(PIECES, min_size=1, max_size=3))
    line = "/".join(parts)
    if draw(st.booleans()):
        line = "/" + line
    if draw(st.integers(0, 3)) == 0:
        line += "/"
    if draw(st.integers(0, 3)) == 0:
        line = "!" + line
    return line


@st.composite
def trees(draw: st.DrawFn) -> dict[str, str]:
    files: dict[str, str] = {}
    for _ in range(draw(st.integers(1, 12))):
        folders = draw(st.lists(st.sampled_from(["a", "b", "ab", "d"]), max_size=3))
        name = draw(NAMES.filter(lambda n: "." in n))
        files["/".join([*folders, name])] = ""
    for folder in {p.rsplit("/", 1)[0] if "/" in p else "" for p in files}:
        if draw(st.booleans()):
            lines = draw(st.lists(ignore_lines(), min_size=1, max_size=4))
            files[f"{folder}/.gitignore".lstrip("/")] = "\n".join(lines) + "\n"
    return files


@needs_git
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tree=trees())
def test_random_trees_match_git(tree):
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        try:
            write(root, tree)
        except (FileExistsError, NotADirectoryError, IsADirectoryError):
            return  # a file and a folder of the same name
        git(root, "init", "-q")
        expected = git_oracle(root)
        assert linted(root, "patterns") == expected, tree
        assert linted(root, "git") == expected, tree


def test_nested_gitignore_files_cost_linear_time(tmp_path, monkeypatch):
    """100 folders, each with a 100-line .gitignore and 40 Python files: matching every path against
    every rule of the tree took over a minute; ancestors only, compiled once, takes well under a second."""
    write_gitignore_repro(tmp_path)
    monkeypatch.setattr(gitlisting, "git_program", lambda: None)
    start = time.perf_counter()
    candidates, _ = discover([tmp_path], tmp_path)
    elapsed = time.perf_counter() - start
    assert len(candidates) == 4000
    assert elapsed < 15, f"{elapsed:.1f} s"


@needs_git
@pytest.mark.parametrize("via", ["git", "patterns"])
def test_an_excluded_folder_named_explicitly_is_walked_and_excluded_below_it(tmp_path, via):
    # exclude = ["extra"]: a name without '/' matches at any depth; the folder named on the command
    # line is walked all the same (as ruff does), an excluded folder below a named one is not
    from recovery_lint.discover import ExcludeSet

    write(tmp_path, {"extra/x.sh": "", "extra/extra/z.sh": "", "sub/extra/y.sh": "", "sub/keep.sh": "", "top.sh": ""})
    git(tmp_path, "init", "-q")
    excludes = ExcludeSet(["extra"], tmp_path)
    with pytest.MonkeyPatch.context() as patch:
        if via == "patterns":
            patch.setattr(gitlisting, "git_program", lambda: None)
        named = discover([tmp_path / "extra", tmp_path / "sub"], tmp_path, excludes)[0]
        whole = discover([tmp_path], tmp_path, excludes)[0]
    assert {c.display for c in named} == {"extra/x.sh", "sub/keep.sh"}
    assert {c.display for c in whole} == {"sub/keep.sh", "top.sh"}


@needs_git
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_python_files_a_launch_reaches_are_checked_before_they_are_read(tmp_path):
    # the engine takes Python files from git's listing unchecked and checks each before its first
    # read: a FIFO would block, a link out of the tree would read a file that is not the repository's
    from .conftest import run_cli

    repo, outside = tmp_path / "repo", tmp_path / "outside"
    training = "import torch\nimport torch_npu\n\nfor step in range(9):\n    def f(:\n"  # read, it gives an RL900
    write(outside, {"secret.py": training})
    launch = "#!/bin/bash\ntorchrun --nproc_per_node 8 {}\n"
    write(
        repo,
        {
            "requirements.txt": "torch==2.1.0\ntorch-npu==2.1.0.post10\n",
            "a/run.sh": launch.format("gone.py"),
            "a/gone.py": training,
            "b/run.sh": launch.format("pipe.py"),
            "c/run.sh": launch.format("link.py"),
            "d/run.sh": launch.format("real.py"),
            "d/real.py": training,
        },
    )
    os.mkfifo(repo / "b" / "pipe.py")
    (repo / "c" / "link.py").symlink_to(outside / "secret.py")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    (repo / "a" / "gone.py").unlink()  # still in the index
    result = run_cli("--output-format", "concise", "--select", "RL900", ".", cwd=repo)
    assert result.returncode == 1, result.stderr
    assert {line.split(":")[0] for line in result.stdout.splitlines() if ": RL" in line} == {"d/real.py"}


@needs_git
@pytest.mark.parametrize("where", [".", "a", "a/b", "a/b/c", "z", ".."])
def test_paths_from_git_listing_are_shown_as_from_the_working_directory(tmp_path, where):
    """Display paths built per folder from git's listing equal os.path.relpath from any folder a
    run starts in: inside the tree, below a listed folder, beside it, above the root."""
    repo = tmp_path / "repo"
    files = ["top.py", "a/x.sh", "a/b/y.py", "a/b/c/z.yaml", "a/bb/w.py", "z/q.sh", "ab/v.py"]
    write(repo, dict.fromkeys(files, ""))
    (repo / "z").mkdir(exist_ok=True)
    git(repo, "init", "-q")
    git(repo, "add", "top.py", "a")  # tracked and untracked files both
    cwd = (repo / where).resolve()
    cwd.mkdir(parents=True, exist_ok=True)
    shown = {c.display for c in discover([repo], cwd)[0]}
    assert shown == {os.path.relpath(repo / f, cwd) for f in files}


@needs_git
def test_an_interrupted_listing_leaves_no_git_running(tmp_path, monkeypatch):
    """git lists the untracked files while the tracked ones are sorted through; a run stopped in
    between (Ctrl-C) stops that git too instead of leaving it behind."""
    write(tmp_path, {"a.py": "", "b.sh": ""})
    git(tmp_path, "init", "-q")
    started: list[subprocess.Popen[bytes]] = []
    real_start = gitlisting._start_git

    def recorded(*args):
        started.append(real_start(*args))
        return started[-1]

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(gitlisting, "_start_git", recorded)
    monkeypatch.setattr(discover_module, "_from_listing", interrupted)
    with pytest.raises(KeyboardInterrupt):
        discover([tmp_path], tmp_path)
    assert started and all(p.returncode is not None for p in started)  # ended (or killed) and reaped


@pytest.mark.parametrize(
    ("pattern", "excluded", "kept"),
    [
        ("[!a]bc.py", "xbc.py", "abc.py"),  # '!' negates a bracket, as in .gitignore
        ("\\[x].py", "[x].py", "x.py"),  # a backslash makes the next character literal
        ("**/gen/*.py", "a/b/gen/x.py", "a/gen/b/x.py"),
        ("/top.py", "top.py", "sub/top.py"),  # a leading '/' anchors
    ],
)
def test_exclude_patterns_are_read_as_gitignore_reads_them(tmp_path, pattern, excluded, kept):
    from recovery_lint.discover import ExcludeSet

    excludes = ExcludeSet([pattern], tmp_path)
    assert excludes.match(tmp_path / excluded) and not excludes.match(tmp_path / kept)


@pytest.mark.parametrize("rel", ["gen", "gen/x.py", "a/gen", "a/gen.py", "keep.py", "."])
def test_an_exclude_entry_given_as_text_is_judged_as_its_path(tmp_path, rel):
    """A walk asks with the entry's text; the answer must be the one its ``Path`` gets (the walked
    root itself, entries below it, and a path outside the configured root)."""
    from recovery_lint.discover import ExcludeSet

    excludes = ExcludeSet(["gen"], tmp_path / "root")
    for path in (tmp_path / "root" / rel, tmp_path / "elsewhere" / rel):
        path = Path(os.path.normpath(path))
        assert excludes.match_entry(os.fspath(path)) == excludes.match_entry(path)
    assert excludes.match_entry(os.fspath(tmp_path / "root" / "a" / "gen"))
    assert not excludes.match_entry(os.fspath(tmp_path / "root" / "a" / "gen.py"))
