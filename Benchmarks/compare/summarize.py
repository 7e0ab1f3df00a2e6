#!/usr/bin/env python3
"""Summarizes the rounds of scripts/bench-compare.sh: for each operation, the median
ops/s of each side, and the median of the per-round ratios Bluejay / Bumble (each ratio
taken from two runs made one after the other in the same round).

    summarize.py OUT_DIR   (reads OUT_DIR/round-N-{bluejay,bumble}.json)

Prints a table, writes OUT_DIR/results.md (Markdown) and OUT_DIR/results.json, and exits
with 1 when the two sides disagree on an operation's check string (they did not work on the
same bytes, or one decodes differently).
"""

import json
import statistics
import sys
from pathlib import Path

UNITS = {
    'hci_adv_report_decode': 'events',
    'h4_deframe': 'packets',
    'att_notification_decode': 'PDUs',
    'att_read_by_type_rsp_decode': 'PDUs',
    'adv_data_decode': 'payloads',
    'adv_data_decode_typed': 'payloads',
    'hci_le_create_connection_encode': 'commands',
    'acl_fragment_512_to_27': 'PDUs',
    'acl_fragment_512_to_251': 'PDUs',
    'acl_reassemble_27': 'PDUs',
    'acl_send_path_27': 'PDUs',
    'acl_send_path_512': 'PDUs',
    'gatt_read': 'reads',
    'gatt_notify': 'notifications',
    'gatt_long_write_512': 'long writes',
}


def human(value: float) -> str:
    for unit, scale in (('M', 1e6), ('k', 1e3)):
        if value >= scale:
            return f'{value / scale:.3g}{unit}'
    return f'{value:.3g}'


def main() -> int:
    out = Path(sys.argv[1])
    rounds = sorted(
        {int(p.name.split('-')[1]) for p in out.glob('round-*-bluejay.json')}
        & {int(p.name.split('-')[1]) for p in out.glob('round-*-bumble.json')}
    )
    if not rounds:
        print('no complete round found', file=sys.stderr)
        return 1
    data = {
        r: (
            json.loads((out / f'round-{r}-bluejay.json').read_text())['results'],
            json.loads((out / f'round-{r}-bumble.json').read_text())['results'],
        )
        for r in rounds
    }
    operations = [op for op in data[rounds[0]][0] if op in data[rounds[0]][1]]
    rows = []
    mismatches = []
    for op in operations:
        ours = [data[r][0][op]['ops_per_sec'] for r in rounds]
        theirs = [data[r][1][op]['ops_per_sec'] for r in rounds]
        ratios = [a / b for a, b in zip(ours, theirs)]
        checks = {data[r][0][op]['check'] for r in rounds} | {data[r][1][op]['check'] for r in rounds}
        if len(checks) != 1:
            mismatches.append((op, sorted(checks)))
        rows.append({
            'operation': op,
            'unit': UNITS.get(op, 'ops'),
            'bluejay_ops_per_sec': statistics.median(ours),
            'bumble_ops_per_sec': statistics.median(theirs),
            'ratio': statistics.median(ratios),
            'ratio_min': min(ratios),
            'ratio_max': max(ratios),
            'check': sorted(checks)[0] if len(checks) == 1 else 'MISMATCH',
        })

    header = ('operation', 'unit', 'Bluejay ops/s', 'Bumble ops/s', 'ratio', 'ratio range', 'same result')
    table = [header] + [
        (
            row['operation'],
            row['unit'],
            human(row['bluejay_ops_per_sec']),
            human(row['bumble_ops_per_sec']),
            f"{row['ratio']:.1f}x",
            f"{row['ratio_min']:.1f}-{row['ratio_max']:.1f}",
            'yes' if row['check'] != 'MISMATCH' else 'NO',
        )
        for row in rows
    ]
    widths = [max(len(line[i]) for line in table) for i in range(len(header))]
    print(f'{len(rounds)} rounds, Bluejay and Bumble interleaved; medians; ratio = Bluejay / Bumble')
    for index, line in enumerate(table):
        print('  '.join(cell.ljust(widths[i]) if i < 2 else cell.rjust(widths[i]) for i, cell in enumerate(line)))
        if index == 0:
            print('  '.join('-' * w for w in widths))
    markdown = ['| ' + ' | '.join(header) + ' |', '|' + '|'.join(['---', '---'] + ['---:'] * (len(header) - 2)) + '|']
    markdown += ['| ' + ' | '.join(line) + ' |' for line in table[1:]]
    (out / 'results.md').write_text('\n'.join(markdown) + '\n')
    (out / 'results.json').write_text(json.dumps({'rounds': len(rounds), 'rows': rows}, indent=2) + '\n')
    for op, checks in mismatches:
        print(f'error: {op}: the two sides disagree: {checks}', file=sys.stderr)
    return 1 if mismatches else 0


if __name__ == '__main__':
    sys.exit(main())
