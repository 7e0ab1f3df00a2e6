#!/usr/bin/env python3
'''Summarizes scripts/bench-rig.sh's results (one JSON object per line:
{"round", "stack": "bluejay"|"bluejay-uncoalesced"|"bumble", "result": {"workload", "items", "cpu_s", "wall_s",
"context_switches", "latency_us", "radio": [stats before, stats after], and "bytes" for the channel workloads, whose
items are KiB}) as markdown on stdout: medians over the rounds, and the
median of the per-round ratios Bumble ÷ Bluejay (above 1: Bluejay uses less CPU).'''

from __future__ import annotations

import json
import statistics
import sys
from collections import defaultdict

STACKS = ('bluejay', 'bluejay-uncoalesced', 'bumble')


def main(path: str) -> None:
    # results[workload][stack][round] = result
    results: dict[str, dict[str, dict[int, dict]]] = defaultdict(lambda: defaultdict(dict))
    with open(path) as file:
        for line in file:
            if line.strip():
                record = json.loads(line)
                results[record['result']['workload']][record['stack']][record['round']] = record['result']

    def median(values):
        values = [v for v in values if v is not None]
        return statistics.median(values) if values else None

    def per_item_us(result):
        return result['cpu_s'] / result['items'] * 1e6

    def radio_per_item(result, key):
        before, after = result['radio']
        return (after.get(key, 0) - before.get(key, 0)) / result['items']

    def text(value, digits=1):
        return '–' if value is None else f'{value:.{digits}f}'

    rounds = max((len(by_round) for by_stack in results.values() for by_round in by_stack.values()), default=0)
    print(f'CPU per item (user+sys of the central\'s process, µs), medians of {rounds} interleaved rounds;')
    print('ratio: median of the per-round ratios Bumble ÷ Bluejay (above 1: Bluejay uses less CPU).')
    print()
    print('Bluejay runs with its defaults; "uncoalesced" is the same client with receive coalescing off')
    print('(HostConfiguration.receiveCoalescingWindow = 0), in the same rounds. The L2CAP channel workloads')
    print('(l2cap_*) count KiB as items: µs/item is CPU µs per KiB, items/s below is KiB/s.')
    print()
    print('| workload | items | Bluejay µs/item | Bumble µs/item | Bumble ÷ Bluejay | uncoalesced µs/item | Bumble ÷ uncoalesced '
          '| Bluejay read p50/p90/p99 µs | uncoalesced read p50/p90/p99 µs | Bumble read p50/p90/p99 µs |')
    print('| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |')
    for workload, by_stack in results.items():
        ours, plain, theirs = by_stack.get('bluejay', {}), by_stack.get('bluejay-uncoalesced', {}), by_stack.get('bumble', {})

        def ratios(side):
            return [per_item_us(theirs[r]) / per_item_us(side[r]) for r in side if r in theirs and side[r]['cpu_s'] > 0]

        first = next(iter((ours or theirs).values()))
        items = f'{first["items"]:g} KiB' if 'bytes' in first else first['items']
        latency = []
        for side in (ours, plain, theirs):
            samples = [r['latency_us'] for r in side.values() if r.get('latency_us')]
            latency.append(' / '.join(text(median(s[i] for s in samples), 0) for i in range(3)) if samples else '')
        print(f'| {workload} | {items} | {text(median(per_item_us(r) for r in ours.values()), 2)} '
              f'| {text(median(per_item_us(r) for r in theirs.values()), 2)} | {text(median(ratios(ours)), 2)} '
              f'| {text(median(per_item_us(r) for r in plain.values()), 2)} | {text(median(ratios(plain)), 2)} '
              f'| {latency[0]} | {latency[1]} | {latency[2]} |')
    print()
    print('Context (medians): items per second of wall time; the central\'s CPU use (CPU ÷ wall); the CPU')
    print('of radio.py (Bumble\'s controllers and the peer, one process) per item and ÷ wall over the same')
    print('span; the central\'s context switches per item; HCI ACL packets and events the controller sent')
    print('to the central\'s host per item.')
    print()
    print('| workload | stack | items/s | central CPU ÷ wall | radio µs/item | radio CPU ÷ wall | switches/item | ACL/item | events/item |')
    print('| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |')
    for workload, by_stack in results.items():
        for stack in STACKS:
            side = by_stack.get(stack)
            if not side:
                continue
            rate = median(r['items'] / r['wall_s'] for r in side.values())
            load = median(r['cpu_s'] / r['wall_s'] for r in side.values())
            radio = median(radio_per_item(r, 'cpu_s') * 1e6 for r in side.values())
            radio_load = median(radio_per_item(r, 'cpu_s') * r['items'] / r['wall_s'] for r in side.values())
            acl = median(radio_per_item(r, 'acl_to_host') for r in side.values())
            events = median(radio_per_item(r, 'events_to_host') for r in side.values())
            switches = median(r['context_switches'] / r['items'] for r in side.values())
            print(f'| {workload} | {stack} | {text(rate, 0)} | {text(load, 2)} | {text(radio, 1)} | {text(radio_load, 2)} '
                  f'| {text(switches, 2)} | {text(acl, 2)} | {text(events, 2)} |')


if __name__ == '__main__':
    main(sys.argv[1])
