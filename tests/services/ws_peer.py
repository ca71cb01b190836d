"""ws_peer.py — a websocket server for tests/services/test_ws_client.c, on Debian's
python3-websockets (an implementation independent of libwebsockets).

Listens on 127.0.0.1 at a free port, prints the port on one line, and serves until its
standard input closes. What it does depends on the path:
  /echo       sends every message back as it came (text or binary), then closes 1000 on "bye"
  /fragments  sends "hello world" as three fragments, a binary message as two, then closes
              with 4001 "done here"
  /big        sends one text message of 5000 bytes, then waits
  /huge       sends one text message of 17,000,000 bytes (over the client's default 16 MiB),
              then waits
  /escape     closes with 4000 and a reason holding terminal escape sequences and a bell
  /escape_msg sends a text that is not JSON and holds escape sequences, then waits
  /auth       answers "ok" when the handshake had `Authorization: Bearer t0k`, then closes
              1000; without it the handshake is refused with HTTP 401
  /forbidden  refuses the handshake with HTTP 403
Exits 77 without the websockets module.
"""
import asyncio
import http
import sys

try:
    import websockets
except ImportError:
    print("SKIP: no python3-websockets", file=sys.stderr)
    sys.exit(77)


async def check(path, headers):
    if path == "/forbidden":
        return http.HTTPStatus.FORBIDDEN, [], b"no\n"
    if path == "/auth" and headers.get("Authorization") != "Bearer t0k":
        return http.HTTPStatus.UNAUTHORIZED, [], b"who?\n"
    return None


async def serve(ws, path):
    try:
        await answer(ws, path)
    except websockets.ConnectionClosed:
        pass  # the client closed first, or vanished: that is its test's business


async def answer(ws, path):
    if path == "/echo":
        async for m in ws:
            if m == "bye":
                await ws.close(1000, "as asked")
                return
            await ws.send(m)
    elif path == "/fragments":
        await ws.send(["he", "llo ", "world"])
        await ws.send([b"\x00\x01", b"\x02"])
        await ws.close(4001, "done here")
    elif path in ("/big", "/huge"):
        await ws.send("x" * (5000 if path == "/big" else 17000000))
        await ws.wait_closed()
    elif path == "/escape":
        await ws.close(4000, "bye \x1b[31mred\x1b]0;title\x07 \u009b2J")
    elif path == "/escape_msg":
        await ws.send("\x1b[2J\x1b[31mnot json")
        await ws.wait_closed()
    elif path == "/auth":
        await ws.send("ok")
        await ws.close(1000, "")


async def main():
    async with websockets.serve(serve, "127.0.0.1", 0, process_request=check) as server:
        print(server.sockets[0].getsockname()[1], flush=True)
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, sys.stdin.read)


asyncio.run(main())
