"""``recovery-lint server`` end to end: a Language Server Protocol client over the server's standard
input and output opens a manifest and the launch script it runs, reads the diagnostics, edits the
manifest and sees the script's diagnostics change, asks for code actions and a hover."""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from .conftest import FIXTURES

pytest.importorskip("pygls")


class Client:
    """A minimal LSP client: Content-Length framed JSON-RPC over the server process's pipes."""

    def __init__(self, cwd: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "recovery_lint", "server"],
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, "RECOVERY_LINT_NO_CACHE": "1"},
        )
        self.messages: queue.Queue[dict] = queue.Queue()
        self.next_id = 0
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        while True:
            length = 0
            while True:
                line = stream.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    break
                name, _, value = line.decode().partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            self.messages.put(json.loads(stream.read(length)))

    def send(self, message: dict) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.process.stdin.flush()

    def request(self, method: str, params: dict) -> dict:
        self.next_id += 1
        self.send({"id": self.next_id, "method": method, "params": params})
        while True:
            message = self.messages.get(timeout=60)
            if message.get("id") == self.next_id:
                return message

    def notify(self, method: str, params: dict) -> None:
        self.send({"method": method, "params": params})

    def diagnostics(self, uris: set[str]) -> dict[str, list[dict]]:
        """The next diagnostics published for each of ``uris``."""
        found: dict[str, list[dict]] = {}
        while set(found) != uris:
            message = self.messages.get(timeout=60)
            if message.get("method") == "textDocument/publishDiagnostics" and message["params"]["uri"] in uris:
                found[message["params"]["uri"]] = message["params"]["diagnostics"]
        return found

    def close(self) -> int:
        self.request("shutdown", {})
        self.notify("exit", {})
        return self.process.wait(timeout=30)


def _open(client: Client, path: Path, version: int = 1) -> None:
    client.notify(
        "textDocument/didOpen",
        {
            "textDocument": {
                "uri": path.as_uri(),
                "languageId": "plaintext",
                "version": version,
                "text": path.read_text(),
            }
        },
    )


def test_the_server_lints_open_documents_with_their_job_and_offers_fixes_and_pages(tmp_path):
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURES / "vcjob-gpt3", repo)
    (repo / ".git").mkdir()
    manifest, script, env = repo / "job.yaml", repo / "scripts" / "train_start.sh", repo / "scripts" / "env.sh"
    client = Client(repo)
    try:
        init = client.request("initialize", {"processId": None, "rootUri": repo.as_uri(), "capabilities": {}})
        assert init["result"]["serverInfo"]["name"] == "recovery-lint"
        client.notify("initialized", {})
        _open(client, manifest)
        _open(client, script)
        _open(client, env)
        uris = {manifest.as_uri(), script.as_uri(), env.as_uri()}
        found = {}
        while not (found.get(script.as_uri()) and found.get(manifest.as_uri())):
            found.update(client.diagnostics(uris))
        codes = {uri: {d["code"] for d in ds} for uri, ds in found.items()}
        assert "RL301" in codes[script.as_uri()] and "RL202" in codes[manifest.as_uri()]
        rl301 = next(d for d in found[script.as_uri()] if d["code"] == "RL301")
        assert rl301["range"]["start"] == {"line": 23, "character": 0} and rl301["severity"] == 2

        actions = client.request(
            "textDocument/codeAction",
            {"textDocument": {"uri": script.as_uri()}, "range": rl301["range"], "context": {"diagnostics": [rl301]}},
        )["result"]
        titles = [a["title"] for a in actions]
        assert any(t.startswith("RL301: ") and t.endswith("(safe fix)") for t in titles), titles
        edit = next(a for a in actions if a["title"].startswith("RL301"))["edit"]["changes"][script.as_uri()][0]
        assert edit["newText"].startswith("torch_npu_run")

        page = client.request(
            "textDocument/hover", {"textDocument": {"uri": script.as_uri()}, "position": rl301["range"]["start"]}
        )["result"]
        assert page["contents"]["kind"] == "markdown" and page["contents"]["value"].startswith("# RL301")

        # one node instead of two: the Parallel Store advice of the script goes, without touching the script
        text = manifest.read_text().replace("replicas: 2", "replicas: 1")
        client.notify(
            "textDocument/didChange",
            {"textDocument": {"uri": manifest.as_uri(), "version": 2}, "contentChanges": [{"text": text}]},
        )
        after = client.diagnostics(uris)
        assert "RL301" not in {d["code"] for d in after[script.as_uri()]}, after[script.as_uri()]
        assert manifest.read_text() != text  # the editor's text was linted, the file left as it is
        assert client.close() == 0
    finally:
        if client.process.poll() is None:
            client.process.kill()


def test_a_withheld_piece_of_advice_is_a_hint_saying_what_settles_it(tmp_path):
    (tmp_path / ".git").mkdir()
    script = tmp_path / "train.sh"
    script.write_text(
        "#!/bin/bash\nexport ASCEND_RT_VISIBLE_DEVICES=0,1,2,3,4,5,6,7\n"
        "torchrun --nnodes 2 --node_rank $NODE_RANK --master_addr $MASTER_ADDR --nproc_per_node 8 train.py\n"
    )
    (tmp_path / "train.py").write_text("import torch\nimport torch_npu\n")
    client = Client(tmp_path)
    try:
        client.request("initialize", {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}})
        client.notify("initialized", {})
        _open(client, script)
        hints = client.diagnostics({script.as_uri()})[script.as_uri()]
        rl301 = next(d for d in hints if d["code"] == "RL301")
        assert rl301["severity"] == 4 and "RL301 withheld: the torch_npu release is unknown" in rl301["message"]
        assert 'set torch-npu = "<version>"' in rl301["message"]
        assert client.close() == 0
    finally:
        if client.process.poll() is None:
            client.process.kill()


def test_without_pygls_the_command_says_how_to_install_it():
    code = (
        "import sys; sys.modules['pygls'] = None; sys.modules['pygls.lsp.server'] = None\n"
        "from recovery_lint.cli import main; sys.exit(main(['server']))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "pip install 'recovery-lint[server]'" in done.stderr, done.stderr


def test_a_fix_over_several_files_is_one_code_action_editing_each_of_them(tmp_path):
    from recovery_lint.registry import all_rules

    case = next(c for c in all_rules()["RL310"].cases if c.title.startswith("four Pods without RankTable mode"))
    changed = {name for name, text in case.fixed.items() if text != case.files[name]}
    assert len(changed) > 1
    (tmp_path / ".git").mkdir()
    for name, text in case.files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    manifest = tmp_path / case.expect[0].split(":")[0]
    client = Client(tmp_path)
    try:
        client.request("initialize", {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}})
        client.notify("initialized", {})
        _open(client, manifest)
        found = client.diagnostics({manifest.as_uri()})[manifest.as_uri()]
        rl310 = next(d for d in found if d["code"] == "RL310")
        actions = client.request(
            "textDocument/codeAction",
            {"textDocument": {"uri": manifest.as_uri()}, "range": rl310["range"], "context": {"diagnostics": [rl310]}},
        )["result"]
        action = next(a for a in actions if a["title"].startswith("RL310"))
        assert action["title"].endswith("(unsafe fix)")
        assert set(action["edit"]["changes"]) == {(tmp_path / name).as_uri() for name in changed}
        assert client.close() == 0
    finally:
        if client.process.poll() is None:
            client.process.kill()


def test_outside_any_repository_the_workspace_folder_links_a_manifest_and_its_script(tmp_path):
    shutil.copytree(FIXTURES / "vcjob-gpt3", tmp_path / "job")  # no .git, no configuration
    manifest, script = tmp_path / "job" / "job.yaml", tmp_path / "job" / "scripts" / "train_start.sh"
    client = Client(tmp_path)
    try:
        client.request("initialize", {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}})
        client.notify("initialized", {})
        _open(client, manifest)
        client.diagnostics({manifest.as_uri()})
        _open(client, script)
        found = client.diagnostics({manifest.as_uri(), script.as_uri()})
        assert "RL301" in {d["code"] for d in found[script.as_uri()]}  # two Pods: read from the manifest
        assert client.close() == 0
    finally:
        if client.process.poll() is None:
            client.process.kill()


def test_pygls_own_language_client_sees_the_same(tmp_path):
    """The same round trip with pygls's LanguageClient, an off-the-shelf LSP client."""
    import asyncio

    from lsprotocol import types
    from pygls.lsp.client import LanguageClient

    repo = tmp_path / "repo"
    shutil.copytree(FIXTURES / "vcjob-gpt3", repo)
    (repo / ".git").mkdir()
    manifest, script = repo / "job.yaml", repo / "scripts" / "train_start.sh"

    async def session() -> None:
        client = LanguageClient("recovery-lint-test", "1")
        published: dict[str, list[types.Diagnostic]] = {}
        arrived = asyncio.Event()

        @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def diagnostics(params: types.PublishDiagnosticsParams) -> None:
            published[params.uri] = params.diagnostics
            arrived.set()

        async def settled(uri: str) -> list[types.Diagnostic]:
            while uri not in published:
                arrived.clear()
                await asyncio.wait_for(arrived.wait(), 60)
            return published.pop(uri)

        await client.start_io(sys.executable, "-m", "recovery_lint", "server", cwd=str(repo))
        await client.initialize_async(
            types.InitializeParams(capabilities=types.ClientCapabilities(), root_uri=repo.as_uri())
        )
        client.initialized(types.InitializedParams())
        for path, language in ((manifest, "yaml"), (script, "shellscript")):
            client.text_document_did_open(
                types.DidOpenTextDocumentParams(
                    text_document=types.TextDocumentItem(path.as_uri(), language, 1, path.read_text())
                )
            )
        found = await settled(script.as_uri())
        while not any(d.code == "RL301" for d in found):
            found = await settled(script.as_uri())
        rl301 = next(d for d in found if d.code == "RL301")
        actions = await client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(script.as_uri()),
                range=rl301.range,
                context=types.CodeActionContext(diagnostics=[rl301]),
            )
        )
        assert any(a.title.startswith("RL301: ") and a.title.endswith("(safe fix)") for a in actions)
        hover = await client.text_document_hover_async(
            types.HoverParams(types.TextDocumentIdentifier(script.as_uri()), rl301.range.start)
        )
        assert hover is not None and hover.contents.value.startswith("# RL301")
        await client.shutdown_async(None)
        client.exit(None)
        await client.stop()

    asyncio.run(session())


def test_positions_count_utf16_code_units_as_lsp_does():
    from recovery_lint.server import _position
    from recovery_lint.span import SourceText

    src = SourceText("a.sh", "# 训练 🚀 x\necho 🚀y\n")
    assert _position(src, src.text.index("x")) == (0, 8)  # the rocket is two UTF-16 units, the CJK one each
    assert _position(src, src.text.index("y")) == (1, 7)
    assert _position(src, len(src.text)) == (2, 0)
