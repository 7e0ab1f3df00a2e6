#!/usr/bin/env python3
'''Bumble's central in the end-to-end benchmark (scripts/bench-rig.sh): the same workloads as
Sources/bluejay-rig-bench/main.swift, through Bumble's Device, Peer and GATT client, on a
slot of radio.py.

Protocol with the driver: a line on stdout with "cmd" is a command for the radio, answered
by one line on stdin; a line with "workload" is a result. Logs go to stderr.

Each result: {"workload", "items", "cpu_s" (this process, user+sys, from just before the
workload starts to its last item), "wall_s", "context_switches" (voluntary + involuntary,
same span), "latency_us" ([p50, p90, p99] of each read, or of each notification from the
send time the radio put in it to its arrival in the app's callback, or null), "radio"
(radio.py's `stats` just before and just after that span)}. The channel workloads count items
in KiB (1024 bytes), so that µs/item is µs per KiB and items/s is KiB/s; they add "bytes".
The notification workloads add "check" (see StreamCheck) and "ok"; a check that fails is
reported, then the process exits 1.
'''

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import math
import resource
import struct
import sys
import time
from typing import Any

from bumble import hci, l2cap
from bumble.core import UUID
from bumble.device import Device, Peer
from bumble.transport import open_transport
from radio import (  # this script's folder is on sys.path
    L2CAP_CREDITS, L2CAP_ECHO_PSM, L2CAP_MPS, L2CAP_MTU, L2CAP_SINK_PSM, NOTIFY_UUID, READ_UUID, SERVICE_UUID,
)

CENTRAL_ADDRESS = 'C0:00:00:00:00:BC'  # random static, set by Bumble's host
READ_WARMUP = 20
# What a streamed notification starts with (radio.py's STREAM_HEADER): sequence number, send time (ns).
STREAM_HEADER = struct.Struct('<IQ')
# How long a stream's last values may take to arrive after the radio says it sent them all.
STREAM_GRACE_S = 5.0


def snapshot() -> tuple[float, int, float]:
    '''CPU seconds (user+sys) and context switches of this process so far, and the time.'''
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime, usage.ru_nvcsw + usage.ru_nivcsw, time.perf_counter()


def percentiles(samples: list[float]) -> list[float]:
    '''Nearest-rank p50, p90, p99 (the Swift client computes them the same way).'''
    ordered = sorted(samples)
    return [ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)] for p in (50, 90, 99)]


class StreamCheck:
    '''Checks the values of one stream of `count` numbered notifications (0 ..< count), as
    Sources/bluejay-rig-bench's StreamCheck does: each number must arrive once. `lost` are the
    numbers that never came, `duplicated` those that came again, `out_of_order` those that came
    after a higher one, `unexpected` numbers past the stream, `wrong_size` values of another
    size. Latency: arrival (CLOCK_MONOTONIC, as the radio's stamp) minus the stamp, per value.'''

    def __init__(self, count: int, size: int):
        self.count, self.size = count, size
        self.seen = bytearray(count)
        self.received = self.unique = self.duplicated = self.out_of_order = self.unexpected = self.wrong_size = 0
        self.highest = -1
        self.latencies_ns: list[int] = []
        self.end: tuple | None = None
        self.complete = asyncio.get_running_loop().create_future()

    def receive(self, value: bytes) -> None:
        now = time.monotonic_ns()
        self.received += 1
        if len(value) != self.size:
            self.wrong_size += 1
        if len(value) < STREAM_HEADER.size:
            self.unexpected += 1
            return
        sequence, sent = STREAM_HEADER.unpack_from(value)
        if sequence >= self.count:
            self.unexpected += 1
            return
        if self.seen[sequence]:
            self.duplicated += 1
            return
        self.seen[sequence] = 1
        self.unique += 1
        self.latencies_ns.append(now - sent)
        if sequence < self.highest:
            self.out_of_order += 1
        else:
            self.highest = sequence
        if self.unique == self.count:
            self.end = snapshot()
            self.complete.set_result(None)

    def report(self, streamed: dict[str, Any]) -> dict[str, Any]:
        '''The counts, with what the radio says it sent and delivered.'''
        return {'requested': self.count, 'notified': streamed.get('notified'), 'delivered': streamed.get('delivered'),
                'received': self.received, 'lost': self.count - self.unique, 'duplicated': self.duplicated,
                'out_of_order': self.out_of_order, 'unexpected': self.unexpected, 'wrong_size': self.wrong_size,
                'stream_errors': 0}

    @staticmethod
    def passed(check: dict[str, Any]) -> bool:
        return (check['delivered'] == check['requested'] == check['received']
                and check['lost'] == check['duplicated'] == check['out_of_order'] == check['unexpected'] == 0
                and check['wrong_size'] == check['stream_errors'] == 0)


class Driver:
    '''Talks to the radio through the driver script (stdout out, stdin in).'''

    def __init__(self, reader: asyncio.StreamReader):
        self.reader = reader

    def send(self, **command: Any) -> None:
        sys.stdout.write(json.dumps(command) + '\n')
        sys.stdout.flush()

    async def reply(self) -> dict[str, Any]:
        line = await self.reader.readline()
        if not line:
            raise RuntimeError('the driver closed stdin')
        reply = json.loads(line)
        if reply.get('event') == 'error':
            raise RuntimeError(f'radio: {reply.get("message")}')
        return reply

    async def radio(self, **command: Any) -> dict[str, Any]:
        self.send(**command)
        return await self.reply()

    async def radio_stats(self) -> dict[str, Any]:
        return await self.radio(cmd='stats')

    def result(self, workload: str, items: float, start: tuple, end: tuple, radio: list[dict[str, Any]],
               latency_us: list[float] | None = None, **extra: Any) -> None:
        (cpu0, switches0, wall0), (cpu1, switches1, wall1) = start, end
        self.send(workload=workload, items=items, cpu_s=cpu1 - cpu0, wall_s=wall1 - wall0,
                  context_switches=switches1 - switches0, latency_us=latency_us, radio=radio, **extra)


async def notify(driver: Driver, peer: Peer, size: int, count: int, interval_ms: float) -> bool:
    '''Streams `count` numbered notifications of `size` bytes (one every `interval_ms`, or as fast
    as the radio goes) and checks them (StreamCheck); returns whether the check passed.'''
    characteristic = peer.get_characteristics_by_uuid(UUID(NOTIFY_UUID))[0]
    check = StreamCheck(count, size)
    await characteristic.subscribe(check.receive)
    radio0 = await driver.radio_stats()
    start = snapshot()
    driver.send(cmd='stream', count=count, size=size, interval_ms=interval_ms)
    streamed = await driver.reply()
    try:
        await asyncio.wait_for(asyncio.shield(check.complete), STREAM_GRACE_S)
    except asyncio.TimeoutError:
        pass
    radio1 = await driver.radio_stats()
    await characteristic.unsubscribe(check.receive, force=True)
    report = check.report(streamed)
    ok = StreamCheck.passed(report)
    name = f'notify_{size}B' + (f'_every{interval_ms:g}ms' if interval_ms > 0 else '')
    latency = [round(s / 1e3, 1) for s in percentiles(check.latencies_ns)] if check.latencies_ns else None
    driver.result(name, count, start, check.end or snapshot(), [radio0, radio1], latency, check=report, ok=ok)
    if not ok:
        print(f'{name}: the stream check failed: {report}', file=sys.stderr)
    return ok


async def read(driver: Driver, peer: Peer, count: int) -> None:
    characteristic = peer.get_characteristics_by_uuid(UUID(READ_UUID))[0]
    for _ in range(READ_WARMUP):
        await characteristic.read_value()
    latencies = []
    radio0 = await driver.radio_stats()
    start = snapshot()
    for _ in range(count):
        began = time.perf_counter()
        value = await characteristic.read_value()
        latencies.append(time.perf_counter() - began)
    end = snapshot()
    radio1 = await driver.radio_stats()
    assert len(value) == 20, value
    driver.result('read_20B', count, start, end, [radio0, radio1],
                  [round(s * 1e6, 1) for s in percentiles(latencies)])


async def scan(driver: Driver, device: Device, advertisers: int, interval_ms: float, reports: int) -> None:
    await driver.radio(cmd='advertisers', count=advertisers, interval_ms=interval_ms)
    received = 0
    done = asyncio.get_running_loop().create_future()

    def on_advertisement(_advertisement) -> None:
        nonlocal received
        received += 1
        if received == reports:
            done.set_result(snapshot())

    device.on('advertisement', on_advertisement)
    radio0 = await driver.radio_stats()
    start = snapshot()
    # Active, as Bluejay's scan always is; the advertisers are not scannable anyway.
    await device.start_scanning(active=True, filter_duplicates=False)
    end = await done
    radio1 = await driver.radio_stats()
    await device.stop_scanning()
    device.remove_listener('advertisement', on_advertisement)
    await driver.radio(cmd='stop_advertisers')
    driver.result(f'scan_{advertisers}adv', reports, start, end, [radio0, radio1])


async def channel_workload(driver: Driver, connection, total: int, echo: bool) -> None:
    '''Writes `total` bytes in SDUs of the peer's MTU on a channel to the sink (or echo) PSM, from
    the first write to the peer's confirmation that all arrived (or to the last byte back).'''
    spec = l2cap.LeCreditBasedChannelSpec(psm=L2CAP_ECHO_PSM if echo else L2CAP_SINK_PSM, mtu=L2CAP_MTU, mps=L2CAP_MPS,
                                          max_credits=L2CAP_CREDITS)
    channel = await connection.create_l2cap_channel(spec=spec)
    echoed = 0
    done = asyncio.get_running_loop().create_future()

    def on_sdu(sdu: bytes) -> None:
        nonlocal echoed
        echoed += len(sdu)
        if echoed >= total and not done.done():
            done.set_result(snapshot())

    channel.sink = on_sdu
    sdu = bytes(channel.peer_mtu)
    radio0 = await driver.radio_stats()
    start = snapshot()
    if not echo:
        driver.send(cmd='l2cap_received', bytes=total)
    for offset in range(0, total, len(sdu)):
        channel.write(sdu[:total - offset])  # queued; Bumble sends as the peer's credits allow
    await channel.drain()
    if echo:
        end = await done
    else:
        received = await driver.reply()
        end = snapshot()
        assert received['bytes'] == total, received
    radio1 = await driver.radio_stats()
    # Left open until the link ends: Bumble's on_channel_closed never frees a closed LE channel's
    # CID in le_coc_channels (it looks in the classic table first), so the peer would refuse
    # the next channel from the same source CID (CONNECTION_REFUSED_SOURCE_CID_ALREADY_ALLOCATED).
    driver.result('l2cap_echo' if echo else 'l2cap_sink', total / 1024, start, end, [radio0, radio1], bytes=total)


async def run(args: argparse.Namespace) -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    driver = Driver(reader)

    transport = await open_transport(f'tcp-client:127.0.0.1:{args.port}')
    device = Device.with_hci('bench-central', hci.Address(CENTRAL_ADDRESS), transport.source, transport.sink)
    await device.power_on()
    address, _, kind = args.peer.partition('/')
    address_type = hci.Address.RANDOM_DEVICE_ADDRESS if kind == 'random' else hci.Address.PUBLIC_DEVICE_ADDRESS
    connection = await device.connect(hci.Address(address, address_type), timeout=15)
    peer = Peer(connection)
    await peer.request_mtu(517)  # as Bluejay's host does on connect
    await peer.discover_services([UUID(SERVICE_UUID)])
    await peer.discover_characteristics()

    checks = []
    for size, count, interval_ms in ((20, args.notify_small, 0), (244, args.notify_large, 0),
                                     (20, args.notify_slow, args.notify_slow_interval_ms)):
        if count > 0:
            checks.append(await notify(driver, peer, size, count, interval_ms))
    if args.reads > 0:
        await read(driver, peer, args.reads)
    if args.l2cap_bytes > 0:
        await channel_workload(driver, connection, args.l2cap_bytes, echo=False)
    if args.l2cap_echo_bytes > 0:
        await channel_workload(driver, connection, args.l2cap_echo_bytes, echo=True)
    if args.scan_reports > 0:
        await scan(driver, device, args.advertisers, args.adv_interval_ms, args.scan_reports)

    await connection.disconnect()
    await transport.close()
    if not all(checks):
        sys.exit(1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--port', type=int, required=True, help="the radio slot's TCP port")
    parser.add_argument('--peer', required=True, help='the peer, "ADDRESS/random" or "ADDRESS"')
    parser.add_argument('--notify-small', type=int, default=5000, help='notifications of 20 bytes')
    parser.add_argument('--notify-large', type=int, default=2000, help='notifications of 244 bytes')
    parser.add_argument('--notify-slow', type=int, default=300, help='notifications of 20 bytes, one every --notify-slow-interval-ms')
    parser.add_argument('--notify-slow-interval-ms', type=float, default=10)
    parser.add_argument('--reads', type=int, default=1000, help='sequential reads of 20 bytes')
    parser.add_argument('--l2cap-bytes', type=int, default=204800, help='bytes to write to the sink PSM')
    parser.add_argument('--l2cap-echo-bytes', type=int, default=204800, help='bytes to write to the echo PSM and read back')
    parser.add_argument('--scan-reports', type=int, default=5000, help='advertising reports to count')
    parser.add_argument('--advertisers', type=int, default=50)
    parser.add_argument('--adv-interval-ms', type=float, default=20)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    asyncio.run(run(args))


if __name__ == '__main__':
    main()
