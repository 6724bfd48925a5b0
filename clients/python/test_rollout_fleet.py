"""Tests of the Python client against a live ``rollout-fleet api --worker`` (embedded vefaas-local).

Run by ``npm test`` (test/python-client.e2e.test.ts starts the server and sets RF_API_URL / RF_API_TOKEN), or by
hand: ``rollout-fleet api --worker`` in one shell, then ``RF_API_URL=http://127.0.0.1:8788 python3 -m unittest``
in this directory. Without RF_API_URL every test is skipped.
"""

from __future__ import annotations

import json
import os
import socket
import struct
import threading
import unittest
import uuid
from pathlib import Path
from typing import List

from rollout_fleet import AgentEnv, CommandTimeoutError, Fleet, FleetError, Group, Result

API = os.environ.get("RF_API_URL")
TOKEN = os.environ.get("RF_API_TOKEN") or None
ROOT = Path(__file__).resolve().parents[2]
EPISODES = ("pyutils__calc-add", "pyutils__text-reverse")
SAMPLES = 2


def sweep_records() -> List[dict]:
    records = [json.loads(line) for line in (ROOT / "examples" / "sweep.jsonl").read_text().splitlines() if line.strip()]
    return [r for r in records if r["episode_id"] in EPISODES]


def expected_resolved() -> dict:
    return {k: v["resolved"] for k, v in json.loads((ROOT / "examples" / "expected.json").read_text()).items()}


class DroppingProxy:
    """A TCP proxy in front of the API that cuts the first ``cuts`` result streams part-way through their second
    item (after the first is whole), with a reset, as a flaky network between a trainer and the fleet would."""

    def __init__(self, upstream: str, cuts: int) -> None:
        host, port = upstream.split("//", 1)[1].rstrip("/").split(":")
        self.upstream = (host, int(port))
        self.cuts_left = cuts
        self.cut = 0
        self.lock = threading.Lock()
        self.server = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.server.getsockname()[1]}"
        threading.Thread(target=self._accept, daemon=True).start()

    def close(self) -> None:
        self.server.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.server.accept()
            except OSError:
                return
            threading.Thread(target=self._relay, args=(client,), daemon=True).start()

    def _relay(self, client: socket.socket) -> None:
        with client, socket.create_connection(self.upstream) as upstream:
            request = b""
            while b"\r\n\r\n" not in request:
                chunk = client.recv(65536)
                if not chunk:
                    return
                request += chunk
            with self.lock:
                cutting = b"/results" in request.split(b"\r\n", 1)[0] and self.cuts_left > 0
                if cutting:
                    self.cuts_left -= 1
            upstream.sendall(request)
            relayed = b""
            while True:
                chunk = upstream.recv(65536)
                if not chunk:
                    return
                if not cutting:
                    client.sendall(chunk)
                    continue
                relayed += chunk
                first = relayed.find(b'{"cursor"')
                second = relayed.find(b'{"cursor"', first + 1) if first >= 0 else -1
                if second < 0:
                    continue
                client.sendall(relayed[: second + 100])
                with self.lock:
                    self.cut += 1
                # A reset, not a clean close: the client sees the connection drop mid-line.
                client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                return


@unittest.skipUnless(API, "set RF_API_URL to a live rollout-fleet api (npm test does)")
class FleetRunTest(unittest.TestCase):
    """One run of two episodes × two samples, submitted once and read in several ways."""

    fleet: Fleet
    run_id: str
    results: List[Result]

    @classmethod
    def setUpClass(cls) -> None:
        cls.fleet = Fleet(API, token=TOKEN, reconnect_delay=0.05)
        cls.run_id = f"py-{uuid.uuid4().hex[:10]}"
        submitted = cls.fleet.submit(cls.run_id, sweep_records(), samples=SAMPLES)
        assert submitted.enqueued == len(EPISODES) * SAMPLES, submitted
        cls.results = list(cls.fleet.results(cls.run_id, follow=True))

    def test_submit_then_follow_results_until_the_run_is_done(self) -> None:
        self.assertEqual(len(self.results), len(EPISODES) * SAMPLES)
        self.assertEqual(sorted((r.episode_id, r.sample_index) for r in self.results),
                         sorted((e, s) for e in EPISODES for s in range(SAMPLES)))
        expected = expected_resolved()
        for r in self.results:
            self.assertEqual(r.status, "completed", r.raw.get("failure"))
            self.assertEqual(r.resolved, expected[r.instance_id], r.instance_id)
            self.assertEqual(r.reward, 1 if expected[r.instance_id] else 0)
            self.assertEqual(r.raw["group"], {"id": r.episode_id, "size": SAMPLES})
        status = self.fleet.status(self.run_id)
        self.assertTrue(status.finished)
        self.assertEqual((status.total, status.done, status.completed), (4, 4, 4))
        self.assertEqual((status.groups_total, status.groups_completed), (2, 2))

    def test_resubmitting_the_same_run_enqueues_nothing(self) -> None:
        again = self.fleet.submit(self.run_id, sweep_records(), samples=SAMPLES)
        self.assertEqual((again.episodes, again.enqueued, again.skipped_done), (4, 0, 4))

    def test_a_cancelled_run_is_refused_then_resumed_on_request(self) -> None:
        run_id = f"py-cancel-{uuid.uuid4().hex[:8]}"
        self.fleet.submit(run_id, sweep_records(), samples=1)
        self.fleet.cancel(run_id)
        with self.assertRaises(FleetError) as raised:
            self.fleet.submit(run_id, sweep_records(), samples=1)
        self.assertEqual((raised.exception.status, raised.exception.code), (409, "RUN_CANCELLED"))
        self.fleet.submit(run_id, sweep_records(), samples=1, resume=True)
        finished = list(self.fleet.results(run_id, follow=True))
        # One line per episode; the cancelled ones ran again and every episode ends completed.
        self.assertEqual(sorted(r.episode_id for r in finished), sorted(EPISODES))
        self.assertEqual({r.status for r in finished}, {"completed"})
        self.assertTrue(self.fleet.status(run_id).finished)

    def test_announce_enqueues_nothing_and_submit_retires_it(self) -> None:
        run_id = f"py-next-{uuid.uuid4().hex[:8]}"
        # The test's worker runs without a warm pool (RF_WARM_POOL_MAX=0): announcing still works, and says it cannot help.
        with self.assertWarns(RuntimeWarning):
            announced = self.fleet.announce(run_id, sweep_records(), samples=3, ttl_s=600)
        self.assertEqual((announced.run_id, announced.sandboxes), (run_id, 6))
        self.assertGreaterEqual(announced.specs, 1)
        self.assertEqual((announced.warm_pool_workers, announced.warm_pool_max), (0, 0))
        self.assertIn("nothing will be pre-warmed" if announced.live_workers else "no worker is running", announced.warning or "")
        with self.assertRaises(FleetError) as raised:
            self.fleet.status(run_id)
        self.assertEqual(raised.exception.code, "RUN_NOT_FOUND")

    def test_groups_come_once_each_with_rewards_mean_and_std(self) -> None:
        groups: List[Group] = list(self.fleet.groups(self.run_id))
        self.assertEqual(sorted(g.episode_id for g in groups), sorted(EPISODES))
        for g in groups:
            reward = 1.0 if expected_resolved()[g.instance_id] else 0.0
            self.assertEqual(g.size, SAMPLES)
            self.assertEqual(g.rewards, [reward] * SAMPLES)
            self.assertEqual(g.reward_mean, reward)
            self.assertEqual(g.reward_std, 0.0)
            self.assertEqual(sorted(r.sample_index for r in g.results), list(range(SAMPLES)))
        # Resuming after the first group's cursor gives the rest only.
        rest = list(self.fleet.groups(self.run_id, after=groups[0].cursor))
        self.assertEqual([g.episode_id for g in rest], [g.episode_id for g in groups[1:]])

    def test_results_resume_after_dropped_connections_without_loss_or_repeats(self) -> None:
        proxy = DroppingProxy(API, cuts=2)
        try:
            through = list(Fleet(proxy.url, token=TOKEN, reconnect_delay=0.05).results(self.run_id, follow=True))
        finally:
            proxy.close()
        self.assertEqual(proxy.cut, 2)
        self.assertEqual([r.cursor for r in through], [r.cursor for r in self.results])
        self.assertEqual([(r.episode_id, r.sample_index) for r in through], [(r.episode_id, r.sample_index) for r in self.results])

    def test_results_from_a_cursor(self) -> None:
        later = list(self.fleet.results(self.run_id, follow=False, after=self.results[1].cursor))
        self.assertEqual([r.cursor for r in later], [r.cursor for r in self.results[2:]])


@unittest.skipUnless(API, "set RF_API_URL to a live rollout-fleet api (npm test does)")
class FleetErrorTest(unittest.TestCase):
    def setUp(self) -> None:
        self.fleet = Fleet(API, token=TOKEN)

    def test_invalid_input_is_located_and_nothing_is_enqueued(self) -> None:
        record = dict(sweep_records()[0])
        record["trajectory"] = [{"arguments": {"command": "ls"}}]
        run_id = f"py-bad-{uuid.uuid4().hex[:8]}"
        with self.assertRaises(FleetError) as caught:
            self.fleet.submit(run_id, [sweep_records()[1], record])
        err = caught.exception
        self.assertEqual((err.status, err.code), (422, "INPUT_INVALID"))
        self.assertIn("nothing was enqueued", err.message)
        self.assertEqual([(p.file, p.path, p.field) for p in err.problems], [("episodes", "$[1]", "trajectory[0].name")])
        with self.assertRaises(FleetError) as missing:
            self.fleet.status(run_id)
        self.assertEqual((missing.exception.status, missing.exception.code), (404, "RUN_NOT_FOUND"))

    def test_a_policy_block_is_checked_at_its_own_place(self) -> None:
        task = dict(sweep_records()[0], trajectory=[], problem_statement="add() subtracts")
        with self.assertRaises(FleetError) as caught:
            self.fleet.submit(f"py-pol-{uuid.uuid4().hex[:8]}", [task], policy={"base_url": "http://127.0.0.1:9/v1", "sampling": {"temperature": 1}})
        self.assertIn(("policy.json", "policy.model"), [(p.file, p.field) for p in caught.exception.problems])
        ok = self.fleet.submit(f"py-pol-{uuid.uuid4().hex[:8]}", [task], dry_run=True,
                               policy={"base_url": "http://127.0.0.1:9/v1", "model": "m", "sampling": {"temperature": 1, "max_completion_tokens": 64}})
        self.assertEqual((ok.episodes, ok.enqueued, ok.dry_run), (1, 0, True))

    def test_a_misspelt_option_gets_a_did_you_mean(self) -> None:
        with self.assertRaises(FleetError) as caught:
            self.fleet._json("POST", "/v1/runs", {"run_id": "x", "episodes": sweep_records(), "sampels": 2})
        self.assertEqual(caught.exception.problems[0].field, "sampels")
        self.assertEqual(caught.exception.problems[0].hint, 'did you mean "samples"?')

    @unittest.skipUnless(TOKEN, "the server has no token")
    def test_a_missing_or_wrong_token_is_refused(self) -> None:
        for token in (None, TOKEN + "x"):
            with self.assertRaises(FleetError) as caught:
                Fleet(API, token=token).status("anything")
            self.assertEqual((caught.exception.status, caught.exception.code), (401, "API_UNAUTHORIZED"))


@unittest.skipUnless(API, "set RF_API_URL to a live rollout-fleet api (npm test does)")
class AgentEnvTest(unittest.TestCase):
    def setUp(self) -> None:
        self.fleet = Fleet(API, token=TOKEN)

    def test_the_seed_verification_flow(self) -> None:
        script = "import sys\nprint(sum([1, 2, 3]))\n"
        with AgentEnv(self.fleet, image="pyutils") as env:
            env.start()
            env.install_tools([{"name": "execute_bash"}, {"name": "str_replace_editor"}])
            self.assertTrue(env.communicate("which str_replace_editor").strip().endswith("/str_replace_editor"))
            created = env.communicate(f"str_replace_editor create --path /tmp/demo.py --file_text '{script}'")
            self.assertIn("File created successfully", created)
            env.communicate("execute_bash 'python3 /tmp/demo.py > /tmp/demo_out.txt'")
            self.assertEqual(env.communicate("cat /tmp/demo_out.txt"), "6\n")
            session = env.session_id
        self.assertIsNone(env.session_id)
        with self.assertRaises(FleetError) as caught:
            self.fleet._json("GET", f"/v1/sessions/{session}")
        self.assertEqual((caught.exception.status, caught.exception.code), (410, "SESSION_CLOSED"))

    def test_the_readme_agent_loop_runs_as_written(self) -> None:
        readme = (ROOT / "README.md").read_text(encoding="utf-8")
        blocks = [b.split("```", 1)[0] for b in readme.split("```python\n")[1:]]
        loop = next(b for b in blocks if "def rollout(" in b)
        namespace: dict = {}
        exec(compile(loop, "README.md", "exec"), namespace)  # noqa: S102 - our own README's example
        script = iter([
            {"id": "c1", "name": "str_replace_editor", "arguments": {"command": "str_replace", "path": "/testbed/pyutils/calc.py",
                                                                   "old_str": "    return a - b", "new_str": "    return a + b"}},
            {"id": "c2", "name": "execute_bash", "arguments": '{"command": "cd /testbed && python3 -c \'from pyutils.calc import add; print(add(2, 3))\'"}'},
            {"id": "c3", "name": "no_such_tool", "arguments": {}},
        ])
        messages, patch = namespace["rollout"](self.fleet, lambda _messages: next(script, None),
                                               {"image": "pyutils", "problem_statement": "add() subtracts"})
        tool_outputs = [m["content"] for m in messages if m["role"] == "tool"]
        self.assertEqual(len(tool_outputs), 3)
        self.assertEqual(tool_outputs[1], "5\n")
        self.assertIn("not found", tool_outputs[2])
        self.assertIn("+    return a + b", patch)

    def test_state_tool_calls_files_and_timeouts(self) -> None:
        with self.fleet.agent_env(image="pyutils", tools=["execute_bash", "str_replace_editor"], env={"MODE": "test"}) as env:
            env.start()
            env.communicate("cd /testbed && export STAGE=two")
            self.assertEqual(env.communicate("pwd; echo $MODE $STAGE"), "/testbed\ntest two\n")
            edited = env.call_tool("str_replace_editor", '{"command": "view", "path": "/testbed/pyutils/calc.py"}')
            self.assertEqual(edited.exit_code, 0)
            self.assertIn("def add", edited.output)
            bad = env.call_tool("no_such_tool", {})
            self.assertEqual(bad.error["code"], "TOOL_ERROR")
            env.write_file("/tmp/notes/ü.txt", "héllo\n")
            self.assertEqual(env.read_file("/tmp/notes/ü.txt"), "héllo\n")
            with self.assertRaises(CommandTimeoutError):
                env.communicate("sleep 30", timeout=1)
            self.assertEqual(env.communicate("echo still usable"), "still usable\n")
            slow = env.run("sleep 30", timeout=1)
            self.assertTrue(slow.timed_out)


if __name__ == "__main__":
    unittest.main()
