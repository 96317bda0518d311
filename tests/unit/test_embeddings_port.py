"""The replica's own embeddings port (deployments.embeddings_port, issue 16): two servers
share one port (SO_REUSEPORT) and answer with the real offline MiniLM's vectors through
the replica's continuous batcher; bad bodies get the field-naming 422; past its bound it
answers 503; closing frees the port and fails the health check."""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Sequence

import httpx
import numpy as np
import pytest

from deployments.config import load_config
from deployments.continuous_batching import ContinuousBatcher
from deployments.embeddings_http import EncodeTimings
from deployments.embeddings_port import EmbeddingsPort, reuse_port_socket
from models.loader import load_role

ROLES = {"pubmedbert": 384}  # role -> output width


@pytest.fixture(scope="module")
def minilm(tmp_path_factory):
    config = load_config("default", data_dir=tmp_path_factory.mktemp("port"))
    return load_role("pubmedbert", config.models)


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _encode_timed(minilm, batches: list[int]):
    async def run(requests: list[tuple[str, ...]]) -> list[np.ndarray]:
        batches.append(sum(len(r) for r in requests))
        flat = [text for request in requests for text in request]
        vectors = np.asarray(await asyncio.to_thread(minilm.encode, flat), dtype=np.float32)
        out, start = [], 0
        for request in requests:
            out.append(vectors[start : start + len(request)])
            start += len(request)
        return out

    batcher = ContinuousBatcher(run, len, max_batch_size=32, batch_wait_timeout_s=0.01)

    async def encode_timed(role: str, texts: Sequence[str]) -> tuple[np.ndarray, EncodeTimings]:
        started = time.perf_counter()
        vectors = await batcher.submit(tuple(texts))
        elapsed = (time.perf_counter() - started) * 1000
        return vectors, EncodeTimings(queue_ms=0.0, forward_ms=elapsed, replica_ms=elapsed)

    return encode_timed


async def _wait_serving(*ports: EmbeddingsPort) -> None:
    for _ in range(200):
        if all(port.serving for port in ports):
            return
        await asyncio.sleep(0.02)
    raise AssertionError("the embeddings port did not start")


async def test_two_replicas_share_one_port_and_answer_with_the_models_vectors(minilm):
    port, batches = _free_port(), []
    servers = [
        EmbeddingsPort(ROLES, _encode_timed(minilm, batches), "127.0.0.1", port) for _ in range(2)
    ]
    for server in servers:
        server.start()  # the second bind must not fail: SO_REUSEPORT
    try:
        await _wait_serving(*servers)
        texts = [f"osimertinib side effects {i}" for i in range(24)]
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:
            answers = await asyncio.gather(
                *(client.post("/v1/embeddings", json={"input": text}) for text in texts)
            )
            bad = await client.post("/v1/embeddings", json={"input": [""]})
            wrong = await client.post("/v1/other", json={"input": "x"})
        assert [a.status_code for a in answers] == [200] * len(texts)
        vectors = np.asarray([a.json()["data"][0]["embedding"] for a in answers], np.float32)
        np.testing.assert_allclose(vectors, minilm.encode(texts), atol=1e-5)
        assert "forward;dur=" in answers[0].headers["server-timing"]
        assert sum(batches) == len(texts) and max(batches) > 1  # concurrent texts batched
        assert bad.status_code == 422 and bad.json()["fields"][0]["field"] == "input"
        assert wrong.status_code == 404
    finally:
        await asyncio.gather(*(server.aclose() for server in servers))
    assert not any(server.serving for server in servers)
    for server in servers:
        with pytest.raises(RuntimeError, match="not serving"):
            server.check()  # the replica's health check fails once the port is gone
    with socket.socket() as plain:  # without SO_REUSEPORT: binds only once the port is free
        plain.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        plain.bind(("127.0.0.1", port))


async def test_past_its_bound_the_port_answers_503_and_serves_the_rest(minilm):
    port, encode_timed = _free_port(), _encode_timed(minilm, [])

    async def slow(role: str, texts: Sequence[str]) -> tuple[np.ndarray, EncodeTimings]:
        await asyncio.sleep(0.5)  # a slow replica: the first three are still in flight
        return await encode_timed(role, texts)

    server = EmbeddingsPort(ROLES, slow, "127.0.0.1", port, 3)
    server.start()
    try:
        await _wait_serving(server)
        server.check()  # serving: no error
        clients = [httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") for _ in range(6)]
        try:
            answers = await asyncio.gather(
                *(c.post("/v1/embeddings", json={"input": "olaparib dose"}) for c in clients)
            )
        finally:
            await asyncio.gather(*(c.aclose() for c in clients))
        codes = sorted(a.status_code for a in answers)
        assert codes.count(200) == 3 and codes.count(503) == 3 and set(codes) <= {200, 503}
        refused = next(a for a in answers if a.status_code == 503)
        assert refused.json()["error"] == "overloaded" and refused.headers["retry-after"]
    finally:
        await server.aclose()


def test_a_port_held_without_reuse_is_refused():
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        with pytest.raises(OSError):
            reuse_port_socket("127.0.0.1", holder.getsockname()[1])


async def test_connections_on_the_shared_port_send_without_nagles_delay():
    # asyncio (unlike uvloop) sets TCP_NODELAY only on sockets whose proto is TCP; on a
    # socket made with proto 0 each answer waited ~40 ms for the client's delayed ACK
    # (690 against 10,000 requests/s in the 2026-12-04 probe)
    accepted: asyncio.Future = asyncio.get_running_loop().create_future()

    async def on_connect(reader, writer):
        sock = writer.get_extra_info("socket")
        accepted.set_result(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
        writer.close()

    listener = reuse_port_socket("127.0.0.1", _free_port())
    server = await asyncio.start_server(on_connect, sock=listener)
    try:
        _, writer = await asyncio.open_connection(*listener.getsockname()[:2])
        assert await asyncio.wait_for(accepted, 5) != 0
        writer.close()
    finally:
        server.close()
        await server.wait_closed()


async def test_a_taken_port_is_refused_with_the_setting_named():
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        taken = holder.getsockname()[1]
        server = EmbeddingsPort(ROLES, _encode_timed(None, []), "127.0.0.1", taken)
        with pytest.raises(OSError, match=rf"serve\.embeddings_port {taken} on 127\.0\.0\.1"):
            server.start()
        assert not server.serving


async def test_a_request_past_the_deadline_gets_a_504_and_the_port_serves_on(minilm):
    port, encode_timed = _free_port(), _encode_timed(minilm, [])

    async def stuck_once(role: str, texts: Sequence[str]) -> tuple[np.ndarray, EncodeTimings]:
        if texts[0] == "stuck":  # a replica that never answers this one request
            await asyncio.sleep(30)
        return await encode_timed(role, texts)

    server = EmbeddingsPort(ROLES, stuck_once, "127.0.0.1", port, request_timeout_s=0.3)
    server.start()
    try:
        await _wait_serving(server)
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:
            started = time.perf_counter()
            late = await client.post("/v1/embeddings", json={"input": "stuck"})
            waited = time.perf_counter() - started
            fine = await client.post("/v1/embeddings", json={"input": "olaparib dose"})
        assert late.status_code == 504 and late.json()["error"] == "DeadlineExceeded"
        assert "serve.request_timeout_s" in late.json()["message"]
        assert waited < 10  # answered at the deadline, not after the replica's 30 s
        assert fine.status_code == 200
    finally:
        await server.aclose()


async def test_a_stalled_upload_gets_a_408_and_holds_no_request_slot(minilm, monkeypatch):
    import deployments.embeddings_http as embeddings_http

    monkeypatch.setattr(embeddings_http, "BODY_TIMEOUT_S", 0.5)
    port = _free_port()
    server = EmbeddingsPort(ROLES, _encode_timed(minilm, []), "127.0.0.1", port, 1)
    server.start()
    stalled = []
    try:
        await _wait_serving(server)
        for _ in range(3):  # headers and a body that never finishes, past the bound of 1
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(
                b"POST /v1/embeddings HTTP/1.1\r\nHost: x\r\nContent-Type: application/json"
                b'\r\nContent-Length: 100\r\n\r\n{"input": '
            )
            await writer.drain()
            stalled.append((reader, writer))
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}") as client:
            fine = await client.post("/v1/embeddings", json={"input": "olaparib dose"})
        assert fine.status_code == 200  # the stalled uploads hold no slot
        answer = await asyncio.wait_for(stalled[0][0].read(4096), 5)
        assert answer.startswith(b"HTTP/1.1 408") and b'"field":"body"' in answer
    finally:
        for _, writer in stalled:
            writer.close()
        await server.aclose()


async def test_a_client_that_hangs_up_cancels_its_request(minilm):
    port, cancelled = _free_port(), asyncio.Event()

    async def slow(role: str, texts: Sequence[str]) -> tuple[np.ndarray, EncodeTimings]:
        try:
            await asyncio.sleep(30)  # a long queue ahead of this request
        except asyncio.CancelledError:
            cancelled.set()
            raise
        raise AssertionError("not cancelled")

    server = EmbeddingsPort(ROLES, slow, "127.0.0.1", port, 4)
    server.start()
    try:
        await _wait_serving(server)
        body = b'{"input": "olaparib dose"}'
        _, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(
            b"POST /v1/embeddings HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
        )
        await writer.drain()
        await asyncio.sleep(0.3)
        writer.close()  # hang up before the answer
        await asyncio.wait_for(cancelled.wait(), 5)
        for _ in range(100):
            if server._in_flight == 0:
                break
            await asyncio.sleep(0.02)
        assert server._in_flight == 0  # its slot is free again
    finally:
        await server.aclose()
