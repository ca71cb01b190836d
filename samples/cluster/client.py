#!/usr/bin/env python3
"""client.py — simulated pizza customers over websockets, for the cluster sample and its benchmark.

Each user has an id of the form ws.server accepts for resuming (u- and 32 hex digits),
connects to URL?user=ID (HAProxy hashes on it) and sends {"config":{"user":ID}}, then its
turns one at a time, each after the last one's answer (a closed loop; --think-ms adds a
pause). When its connection drops (a replica killed), it reconnects with the same id,
which the balancer sends to a live replica, resumes its conversation from the store and
sends the unanswered turn again. Prints one JSON summary: turns answered, errors,
turns/s, latency p50/p99 in ms, reconnects, and the take-over gaps (from a dropped
connection to the next answer of that user). --record FILE writes every answer
[user, turn, reply, slots] as JSON lines, for checks.

Usage: client.py URL [--users N] [--turns T] [--think-ms MS] [--record FILE] [--seed S]
Needs python3-websockets.
"""
import argparse
import asyncio
import json
import random
import statistics
import time

import websockets

UTTERANCES = [
    "hello", "i want a large pizza with mushrooms", "make it two pizzas",
    "deliver to 5 main street", "yes", "what do you have", "can i get a small pepperoni pizza",
    "add olives", "cancel my order", "thanks",
    "i would like a medium pizza with ham and pineapple", "3 pizzas please", "no", "bye",
]


class User:
    def __init__(self, no, rng, args, stats):
        self.no, self.args, self.stats = no, args, stats
        self.id = "u-%032x" % rng.getrandbits(128)
        self.url = "%s%suser=%s" % (args.url, "&" if "?" in args.url else "?", self.id)
        self.answers = []

    async def connect(self):
        deadline = time.monotonic() + 60
        while True:
            try:
                ws = await websockets.connect(self.url, max_size=None, open_timeout=5)
                await ws.send(json.dumps({"config": {"user": self.id}}))
                # A `ready` with a fresh id comes first, then the one for our config.
                for _ in range(2):
                    ready = json.loads(await ws.recv())
                    if ready.get("type") == "ready" and ready.get("user") == self.id:
                        return ws
                await ws.close()
            except (OSError, asyncio.TimeoutError, websockets.exceptions.WebSocketException):
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("%s: cannot reconnect for 60 s" % self.id)
            await asyncio.sleep(0.05)

    async def run(self):
        ws = await self.connect()
        dropped_at = None
        k = 0
        while k < self.args.turns:
            text = UTTERANCES[(self.no * 5 + k) % len(UTTERANCES)]
            t0 = time.monotonic()
            try:
                await ws.send(json.dumps({"text": text, "id": k}))
                while True:
                    m = json.loads(await ws.recv())
                    if m.get("id") == k or m.get("type") == "reply":
                        break
            except (OSError, websockets.exceptions.WebSocketException):
                # The replica went away: reconnect (the balancer picks a live one) and send
                # this turn again.
                if dropped_at is None:
                    dropped_at = time.monotonic()
                self.stats["reconnects"] += 1
                ws = await self.connect()
                continue
            t1 = time.monotonic()
            if m.get("type") == "reply":
                self.stats["latency"].append(t1 - t0)
                self.answers.append([self.id, m["turn"], m["reply"], m.get("slots", {})])
                if dropped_at is not None:
                    self.stats["takeover"].append(t1 - dropped_at)
                    dropped_at = None
            else:
                self.stats["errors"].append(m.get("error"))
            k += 1
            if self.args.think_ms:
                await asyncio.sleep(self.args.think_ms / 1000)
        await ws.close()


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p / 100 * len(xs)))] if xs else None


async def main(args):
    rng = random.Random(args.seed)
    stats = {"latency": [], "errors": [], "reconnects": 0, "takeover": []}
    users = [User(i, rng, args, stats) for i in range(args.users)]
    start = time.monotonic()
    await asyncio.gather(*(u.run() for u in users))
    secs = time.monotonic() - start
    if args.record:
        with open(args.record, "w") as f:
            for u in users:
                for a in u.answers:
                    f.write(json.dumps(a) + "\n")
    lat = [x * 1000 for x in stats["latency"]]
    take = [x * 1000 for x in stats["takeover"]]
    print(json.dumps({
        "users": args.users, "turns": len(lat), "errors": len(stats["errors"]),
        "error_samples": stats["errors"][:3], "seconds": round(secs, 2),
        "turns_per_s": round(len(lat) / secs, 1),
        "p50_ms": round(pct(lat, 50), 2) if lat else None,
        "p99_ms": round(pct(lat, 99), 2) if lat else None,
        "reconnects": stats["reconnects"],
        "takeover_ms_median": round(statistics.median(take), 1) if take else None,
        "takeover_ms_max": round(max(take), 1) if take else None,
        "users_taken_over": len(take)}))


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("url")
    ap.add_argument("--users", type=int, default=100)
    ap.add_argument("--turns", type=int, default=10)
    ap.add_argument("--think-ms", type=int, default=0)
    ap.add_argument("--record")
    ap.add_argument("--seed", type=int, default=1)
    asyncio.run(main(ap.parse_args()))
