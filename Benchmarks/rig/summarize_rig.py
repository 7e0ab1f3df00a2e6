#!/usr/bin/env python3
'''Summarizes scripts/bench-rig.sh's results as markdown on stdout; exits 1 when a stream check
failed (or a stream has no check).

Input: one JSON object per line, {"round", "stack", "load" (the 1-minute load average as the
client started), "result": {"workload", "items", "cpu_s", "wall_s", "context_switches",
"latency_us" ([p50, p90, p99] or null), "radio": [stats before, stats after], "bytes" for the
channel workloads (whose items are KiB), "check" and "ok" for the notification workloads}}.
Stacks: "bluejay-async", "bluejay-callbacks", each optionally "-nocoalescing" (receive
coalescing off), and "bumble".

Tables: CPU per item and the median of the per-round ratios Bumble ÷ this stack (above 1:
Bluejay uses less); latencies; what coalescing adds to each stream's latency; context; checks.'''

from __future__ import annotations

import json
import statistics
import sys
from collections import defaultdict

STACK_ORDER = ('bluejay-async', 'bluejay-callbacks', 'bluejay-async-nocoalescing', 'bluejay-callbacks-nocoalescing',
               'bluejay', 'bluejay-uncoalesced', 'bumble')
CHECK_FIELDS = ('requested', 'delivered', 'received', 'lost', 'duplicated', 'out_of_order', 'unexpected', 'wrong_size',
                'stream_errors')
# What the issue asks of the slow stream: coalescing may add at most this much to its p99 (µs).
SLOW_STREAM_P99_BUDGET_US = 500


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def text(value, digits=1):
    return '–' if value is None else f'{value:.{digits}f}'


def per_item_us(result):
    return result['cpu_s'] / result['items'] * 1e6


def radio_per_item(result, key):
    before, after = result['radio']
    return (after.get(key, 0) - before.get(key, 0)) / result['items']


def stack_key(stack):
    return (STACK_ORDER.index(stack) if stack in STACK_ORDER else len(STACK_ORDER), stack)


def main(path: str) -> int:
    # results[workload][stack][round] = result
    results: dict[str, dict[str, dict[int, dict]]] = defaultdict(lambda: defaultdict(dict))
    loads: list[float] = []
    with open(path) as file:
        for line in file:
            if line.strip():
                record = json.loads(line)
                results[record['result']['workload']][record['stack']][record['round']] = record['result']
                if record.get('load') is not None:
                    loads.append(float(record['load']))

    rounds = max((len(by_round) for by_stack in results.values() for by_round in by_stack.values()), default=0)
    stacks = sorted({stack for by_stack in results.values() for stack in by_stack}, key=stack_key)
    print(f'Rounds: {rounds}; stacks in each round: {", ".join(stacks)}.')
    if loads:
        print(f'1-minute load average as each client started: {min(loads):.2f}–{max(loads):.2f}.')
    print()
    print('CPU per item: user+sys of the central\'s process (every thread, getrusage), µs, median over the rounds;')
    print('"Bumble ÷ this": median of the per-round ratios (above 1: this stack uses less CPU than Bumble\'s central).')
    print('"-nocoalescing": the same client with HostConfiguration.receiveCoalescingWindow = 0. Latency: reads, from the')
    print('call to its result; notifications, from the send time the radio wrote in each (CLOCK_MONOTONIC) to the')
    print('app\'s callback or the stream\'s consumer; medians over the rounds of each round\'s percentiles. The channel')
    print('workloads (l2cap_*) count KiB as items.')
    print()
    print('| workload | stack | items | µs/item | Bumble ÷ this | latency p50 / p90 / p99 µs |')
    print('| --- | --- | ---: | ---: | ---: | ---: |')
    for workload, by_stack in results.items():
        theirs = by_stack.get('bumble', {})
        for stack in sorted(by_stack, key=stack_key):
            side = by_stack[stack]
            ratios = [per_item_us(theirs[r]) / per_item_us(side[r]) for r in side if r in theirs and side[r]['cpu_s'] > 0]
            first = next(iter(side.values()))
            items = f'{first["items"]:g} KiB' if 'bytes' in first else f'{first["items"]:g}'
            samples = [r['latency_us'] for r in side.values() if r.get('latency_us')]
            latency = ' / '.join(text(median(s[i] for s in samples), 0) for i in range(3)) if samples else ''
            ratio = '' if stack == 'bumble' else text(median(ratios), 2)
            print(f'| {workload} | {stack} | {items} | {text(median(per_item_us(r) for r in side.values()), 2)} '
                  f'| {ratio} | {latency} |')

    over_budget = coalescing_table(results)

    print()
    print('Context (medians): items per second of wall time; the central\'s CPU use (CPU ÷ wall); the CPU of radio.py')
    print('(Bumble\'s controllers and the peer, one process) per item and ÷ wall over the same span; the central\'s')
    print('context switches per item; HCI ACL packets and events the controller sent to the central\'s host per item.')
    print()
    print('| workload | stack | items/s | central CPU ÷ wall | radio µs/item | radio CPU ÷ wall | switches/item | ACL/item | events/item |')
    print('| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |')
    for workload, by_stack in results.items():
        for stack in sorted(by_stack, key=stack_key):
            side = by_stack[stack]
            rate = median(r['items'] / r['wall_s'] for r in side.values() if r['wall_s'] > 0)
            load = median(r['cpu_s'] / r['wall_s'] for r in side.values() if r['wall_s'] > 0)
            radio = median(radio_per_item(r, 'cpu_s') * 1e6 for r in side.values())
            radio_load = median(radio_per_item(r, 'cpu_s') * r['items'] / r['wall_s'] for r in side.values() if r['wall_s'] > 0)
            acl = median(radio_per_item(r, 'acl_to_host') for r in side.values())
            events = median(radio_per_item(r, 'events_to_host') for r in side.values())
            switches = median(r['context_switches'] / r['items'] for r in side.values())
            print(f'| {workload} | {stack} | {text(rate, 0)} | {text(load, 2)} | {text(radio, 1)} | {text(radio_load, 2)} '
                  f'| {text(switches, 2)} | {text(acl, 2)} | {text(events, 2)} |')

    failed = checks_table(results)
    if over_budget:
        print()
        print(f'Note: receive coalescing adds more than {SLOW_STREAM_P99_BUDGET_US} µs to the p99 latency of a slow stream '
              f'above: {", ".join(over_budget)}.')
    return 1 if failed else 0


def coalescing_table(results) -> list[str]:
    '''What receive coalescing adds to each stream's latency: per API and round, the client with
    coalescing minus the same client without it, in the same round; medians over the rounds.
    Returns the slow streams (…_every…ms) whose p99 grew by more than the budget.'''
    rows, over = [], []
    for workload, by_stack in results.items():
        if not workload.startswith('notify_'):
            continue
        for api in ('async', 'callbacks'):
            on, off = by_stack.get(f'bluejay-{api}', {}), by_stack.get(f'bluejay-{api}-nocoalescing', {})
            paired = [(on[r]['latency_us'], off[r]['latency_us']) for r in on
                      if r in off and on[r].get('latency_us') and off[r].get('latency_us')]
            if not paired:
                continue
            added = [median(a[i] - b[i] for a, b in paired) for i in range(3)]
            rows.append(f'| {workload} | {api} | {" / ".join(text(v, 0) for v in added)} | {len(paired)} |')
            if '_every' in workload and added[2] is not None and added[2] > SLOW_STREAM_P99_BUDGET_US:
                over.append(f'{workload} ({api}: +{added[2]:.0f} µs)')
    if rows:
        print()
        print('What receive coalescing adds to notification latency: the client with coalescing minus the same client')
        print('without it, in the same round (median over the rounds; negative: lower with coalescing). Fast streams queue')
        print('in the radio (its backlog is most of their latency); the slow stream (…_every…ms) shows what a value waits.')
        print()
        print('| workload | API | added p50 / p90 / p99 µs | rounds |')
        print('| --- | --- | ---: | ---: |')
        for row in rows:
            print(row)
    return over


def checks_table(results) -> bool:
    '''Every stream's check, summed over the rounds; returns whether one failed.'''
    rows, failed = [], False
    for workload, by_stack in results.items():
        if not workload.startswith('notify_'):
            continue
        for stack in sorted(by_stack, key=stack_key):
            side = by_stack[stack]
            checks = [r.get('check') for r in side.values()]
            ok = all(c is not None for c in checks) and all(r.get('ok') is True for r in side.values())
            failed |= not ok
            totals = [sum((c or {}).get(field) or 0 for c in checks) for field in CHECK_FIELDS]
            rows.append(f'| {workload} | {stack} | {len(side)} | ' + ' | '.join(str(t) for t in totals)
                        + f' | {"pass" if ok else "**FAIL**"} |')
    if rows:
        print()
        print('Stream checks, summed over the rounds. requested: notifications the radio was asked for; delivered: ATT')
        print('notifications of the value the central\'s controller wrote to its host (counted by radio.py on the wire);')
        print('received: values the app got. A check passes when delivered = received = requested and nothing was lost,')
        print('duplicated, out of order (after a higher number), unexpected (a number past the stream), of the wrong')
        print('size, or an error of the listen.')
        print()
        print('| workload | stack | rounds | ' + ' | '.join(f.replace('_', ' ') for f in CHECK_FIELDS) + ' | check |')
        print('| --- | --- | ---: | ' + ' | '.join('---:' for _ in CHECK_FIELDS) + ' | --- |')
        for row in rows:
            print(row)
    return failed


if __name__ == '__main__':
    sys.exit(main(sys.argv[1]))
