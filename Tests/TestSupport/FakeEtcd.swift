import Foundation
import Glibc

/// A hostile etcd member on loopback, for the tests of what a follower does with a peer that lies, floods or fails:
/// a small HTTP/1.1 server (Python's asyncio, run as a process of its own) that speaks enough of etcd's JSON gateway
/// (`/v3/kv/range`, `/v3/watch`) to be followed, and answers as the scenario says. Only where an issue asks for a fake
/// etcd (issue 47); every other fleet test runs against real etcd (``LocalEtcd``).
///
/// Scenarios:
/// - `endless`: an empty suite at revision 1, then a watch that sends changes of `/splint/app/k` (values of 16 KiB)
///   as fast as the reader takes them, for ever. Its output counts the bytes the watch sent: `sent N`.
/// - `store`: the suite holds the keys of ``Key``s given, and the watch, once made, says nothing more. A range honours
///   `limit` (with `more`), `revision`, `keys_only` and `count_only`, as etcd does.
/// - `proxy`: every request is passed to the member at `upstream` and its answer back, but for the requests the
///   faults name, each meeting the request it is written for among those a follower follows with (its reports, on
///   leases, puts and transactions, are passed): every watch the next `watch-` fault, every other range the next
///   other fault (so that the follower gets on between two); once the faults are used up, everything is passed.
///
/// What it answered with each fault is printed a line each (`fault NAME`), as it answers.
public final class FakeEtcd: Sendable {
  /// The member's client URL.
  public let endpoint: String
  private let process: RunningProgram

  /// A key the `store` scenario holds, and its value (any bytes: not UTF-8, not JSON, 9 MB).
  public struct Key: Sendable {
    /// The key's bytes.
    public let key: [UInt8]
    /// Its value's bytes.
    public let value: [UInt8]

    /// A key and its value, as bytes.
    public init(_ key: [UInt8], _ value: [UInt8]) {
      self.key = key
      self.value = value
    }

    /// A key and its value, as their UTF-8 bytes.
    public init(_ key: String, _ value: String) {
      self.init(Array(key.utf8), Array(value.utf8))
    }
  }

  /// The faults the `proxy` scenario knows, each an answer etcd's gateway gives (or a lying member could).
  public static let gatewayFaults = [
    "grpc-1", "grpc-2", "grpc-3", "grpc-4", "grpc-5", "grpc-6", "grpc-8", "grpc-9", "grpc-10", "grpc-11", "grpc-12",
    "grpc-13", "grpc-14", "grpc-15", "no-leader", "http-404", "http-500-text", "http-502-html", "http-503",
    "not-json", "not-http", "no-header", "revision-max", "revision-negative", "other-cluster", "closed", "half-answer",
    "watch-ends", "watch-error-line", "watch-cancelled", "watch-compacted-max", "watch-event-revision-max",
    "watch-garbage-line",
  ]

  /// Starts a member with `scenario`: `keys` for `store`, `upstream` (a client URL) and `faults` for `proxy`.
  public static func start(
    _ scenario: String, keys: [Key] = [], upstream: String? = nil, faults: [String] = []
  ) async throws -> FakeEtcd {
    let data = FileManager.default.temporaryDirectory.appendingPathComponent("splint-fake-etcd-\(UUID()).json")
    let encoded = keys.map {
      ["key": Data($0.key).base64EncodedString(), "value": Data($0.value).base64EncodedString()]
    }
    try JSONSerialization.data(withJSONObject: encoded).write(to: data)
    let process = try await Programs.start(
      [Programs.python, "-c", script, scenario, data.path, upstream ?? "", faults.joined(separator: ",")],
      seconds: nil)
    guard
      await eventually(within: 30, { process.stdoutSoFar.contains("\n") }),
      let line = process.stdoutSoFar.split(separator: "\n").first, line.hasPrefix("port ")
    else {
      process.kill()
      throw EtcdFailure(command: "the fake etcd's start", output: await process.wait().stderr)
    }
    return FakeEtcd(endpoint: "http://127.0.0.1:\(line.dropFirst(5))", process: process)
  }

  private init(endpoint: String, process: RunningProgram) {
    self.endpoint = endpoint
    self.process = process
  }

  /// What the member printed so far, a line each.
  public var lines: [String] { process.stdoutSoFar.split(separator: "\n").map(String.init) }

  /// Stops the member.
  public func stop() async {
    process.send(SIGKILL)
    _ = await process.wait()
  }

  deinit { process.kill() }

  private static let script = #"""
    import asyncio, base64, json, sys

    scenario, data_path, upstream, faults = sys.argv[1], sys.argv[2], sys.argv[3], [f for f in sys.argv[4].split(",") if f]
    with open(data_path) as f:
        store = sorted((base64.b64decode(k["key"]), base64.b64decode(k["value"])) for k in json.load(f))
    CLUSTER = "4242"
    REVISION = 7 if store else 1
    requests = 0
    ranges = 0
    sent = 0

    def b64(b): return base64.b64encode(b).decode()
    def header(revision=None): return {"cluster_id": CLUSTER, "member_id": "1", "revision": str(revision or REVISION), "raft_term": "2"}

    async def read_request(reader):
        line = await reader.readline()
        if not line: return None
        method, path, _ = line.decode().split(" ", 2)
        headers = {}
        while True:
            h = await reader.readline()
            if h in (b"\r\n", b"\n", b""): break
            name, value = h.decode().split(":", 1)
            headers[name.strip().lower()] = value.strip()
        body = await reader.readexactly(int(headers.get("content-length", "0")))
        return method, path, headers, body

    async def respond(writer, status, body, content_type="application/json", reason="OK"):
        if isinstance(body, (dict, list)): body = json.dumps(body).encode()
        writer.write(f"HTTP/1.1 {status} {reason}\r\nContent-Type: {content_type}\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body)
        await writer.drain()

    async def start_stream(writer):
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
        await writer.drain()

    async def line(writer, obj):
        global sent
        data = (obj if isinstance(obj, bytes) else json.dumps(obj).encode()) + b"\n"
        writer.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        sent += len(data)
        await writer.drain()

    def in_range(key, start, end):
        if end == b"": return key == start
        if end == b"\0": return key >= start
        return start <= key < end

    async def serve_range(writer, request):
        start = base64.b64decode(request.get("key", ""))
        end = base64.b64decode(request.get("range_end", ""))
        kvs = [(k, v) for k, v in store if in_range(k, start, end)]
        if request.get("count_only"):
            return await respond(writer, 200, {"header": header(), "count": str(len(kvs))})
        limit = int(request.get("limit", 0) or 0)
        page, more = (kvs[:limit], len(kvs) > limit) if limit else (kvs, False)
        keys_only = request.get("keys_only")
        items = [{"key": b64(k), "mod_revision": str(REVISION), **({} if keys_only else {"value": b64(v)})} for k, v in page]
        await respond(writer, 200, {"header": header(), "kvs": items, "more": more, "count": str(len(kvs))})

    async def serve_watch(writer, request):
        await start_stream(writer)
        await line(writer, {"result": {"header": header(), "created": True}})
        if scenario == "endless":
            revision = REVISION
            value = b64(json.dumps("x" * 16384).encode())
            while True:
                revision += 1
                await line(writer, {"result": {"header": header(revision), "events": [
                    {"kv": {"key": b64(b"/splint/app/k"), "value": value, "mod_revision": str(revision)}}]}})
                if revision % 100 == 0: print(f"sent {sent}", flush=True)
        while True: await asyncio.sleep(3600)

    def error_body(code, message): return {"error": message, "code": code, "message": message}

    async def fault(name, writer, path):
        print(f"fault {name}", flush=True)
        if name.startswith("grpc-"):
            code = int(name[5:])
            return await respond(writer, 500 if code != 14 else 503, error_body(code, f"fault {code}: \x1b[31mred\x1b[0m"), reason="Error")
        if name == "no-leader": return await respond(writer, 503, error_body(14, "etcdserver: no leader"), reason="Error")
        if name == "http-404": return await respond(writer, 404, b"404 page not found\n", "text/plain", "Not Found")
        if name == "http-500-text": return await respond(writer, 500, b"internal error\x1b]0;owned\x07\n", "text/plain", "Error")
        if name == "http-502-html": return await respond(writer, 502, b"<html>bad gateway</html>", "text/html", "Bad Gateway")
        if name == "http-503": return await respond(writer, 503, b"", "text/plain", "Unavailable")
        if name == "not-json": return await respond(writer, 200, b"this is not json")
        if name == "not-http":
            writer.write(b"SSH-2.0-OpenSSH_9.2\r\n\r\n"); await writer.drain(); writer.close(); return
        if name == "no-header": return await respond(writer, 200, {"kvs": []})
        if name == "revision-max": return await respond(writer, 200, {"header": header(9223372036854775807), "count": "0", "kvs": []})
        if name == "revision-negative": return await respond(writer, 200, {"header": header(-5), "count": "0", "kvs": []})
        if name == "other-cluster":
            h = header(); h["cluster_id"] = "99"
            return await respond(writer, 200, {"header": h, "count": "0", "kvs": []})
        if name == "closed": writer.close(); return
        if name == "half-answer":
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{\"header\":")
            await writer.drain(); writer.close(); return
        # The watch's faults: a stream that starts, then says what a lying or dying member says.
        await start_stream(writer)
        if name == "watch-ends":
            await line(writer, {"result": {"header": header(), "created": True}})
        elif name == "watch-error-line":
            await line(writer, {"error": {"grpc_code": 14, "http_code": 503, "message": "etcdserver: no leader \x1b[2J", "http_status": "Service Unavailable"}})
        elif name == "watch-cancelled":
            await line(writer, {"result": {"header": header(), "canceled": True, "cancel_reason": "rpc error: \x1b[1mclosing\x1b[0m"}})
        elif name == "watch-compacted-max":
            await line(writer, {"result": {"header": header(), "canceled": True, "compact_revision": "9223372036854775807"}})
        elif name == "watch-event-revision-max":
            await line(writer, {"result": {"header": header(), "created": True}})
            await line(writer, {"result": {"header": header(9223372036854775807), "events": [{"kv": {"key": b64(b"/splint/app/lie"), "value": b64(b"1"), "mod_revision": "9223372036854775807"}}]}})
        else:  # watch-garbage-line
            await line(writer, b"\x1b[31m{not etcd's}")
        writer.write(b"0\r\n\r\n"); await writer.drain(); writer.close()

    async def proxy(method, path, headers, body, writer):
        host, port = upstream.split("//", 1)[1].split(":")
        up_reader, up_writer = await asyncio.open_connection(host, int(port))
        kept = "".join(f"{k}: {v}\r\n" for k, v in headers.items() if k not in ("connection", "host", "content-length"))
        up_writer.write(f"{method} {path} HTTP/1.1\r\nHost: {host}:{port}\r\n{kept}Connection: close\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body)
        await up_writer.drain()
        try:
            while chunk := await up_reader.read(65536):
                writer.write(chunk)
                await writer.drain()
        finally:
            up_writer.close()
        writer.close()

    async def handle(reader, writer):
        global requests, ranges
        try:
            while (request := await read_request(reader)) is not None:
                method, path, headers, body = request
                requests += 1
                if scenario == "proxy":
                    # Each fault meets what it is written for: every watch meets the next of a watch's faults, and
                    # every other range the next of the others.
                    watch = path == "/v3/watch"
                    if watch or path == "/v3/kv/range":
                        ranges += 0 if watch else 1
                        kind = [f for f in faults if f.startswith("watch-") == watch]
                        if kind and (watch or ranges % 2 == 1):
                            faults.remove(kind[0])
                            await fault(kind[0], writer, path)
                            if writer.is_closing(): return
                            continue
                    return await proxy(method, path, headers, body, writer)
                parsed = json.loads(body or b"{}")
                if path == "/v3/kv/range": await serve_range(writer, parsed)
                elif path == "/v3/watch": return await serve_watch(writer, parsed["create_request"])
                else: await respond(writer, 404, b"404 page not found\n", "text/plain", "Not Found")
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            writer.close()

    async def main():
        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        print(f"port {server.sockets[0].getsockname()[1]}", flush=True)
        async with server: await server.serve_forever()

    asyncio.run(main())
    """#
}
