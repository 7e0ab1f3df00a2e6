#!/usr/bin/env python3
# A Bumble host on a Bluejay virtual controller: proof that BluetoothVirtual speaks standard
# HCI to a stack nobody in this project wrote.
#
#   Bumble Host/Device (this script) --H4 over TCP--> VirtualControllerServer (Swift test)
#                                                    `-> VirtualController "bumble" on a VirtualLink
#                                                        <- radio -> VirtualController "bluejay" <- LEHost (Swift)
#
# The script powers the Bumble host on (HCI Reset, the controller's capabilities, event
# masks...), publishes a GATT service and advertises it with legacy advertising commands.
# It reports on stdout, one JSON object per line (logs go to stderr):
#   {"event":"ready","address":"F1:...","address_type":"random"}  once advertising
#   {"event":"connected","peer_address":"...","role":"peripheral"}
#   {"event":"read","uuid":"..."}                                  when the client reads
#   {"event":"disconnected","reason":19}
# It ends when stdin closes or says "quit", disconnecting first.

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
from typing import Any

from bumble import gatt, hci
from bumble.device import Connection, Device
from bumble.transport import open_transport

SERVICE_UUID = '6E40A000-B5A3-F393-E0A9-E50E24DCCA9E'
GREETING_UUID = '6E40A001-B5A3-F393-E0A9-E50E24DCCA9E'
LONG_UUID = '6E40A002-B5A3-F393-E0A9-E50E24DCCA9E'
GREETING = b'Hello from Bumble on a Bluejay virtual controller'
# Longer than one LL PDU and one ACL buffer: it crosses the link in fragments.
LONG_VALUE = bytes(i % 251 for i in range(400))

logger = logging.getLogger('host_on_virtual')


def emit(event: str, **fields: Any) -> None:
    sys.stdout.write(json.dumps({'event': event, **fields}, separators=(',', ':')) + '\n')
    sys.stdout.flush()


def field(kind: int, payload: bytes) -> bytes:
    return bytes([len(payload) + 1, kind]) + payload


def readable(uuid: str, value: bytes) -> gatt.Characteristic:
    def read(connection: Connection) -> bytes:
        emit('read', uuid=uuid)
        return value

    return gatt.Characteristic(
        uuid,
        gatt.Characteristic.Properties.READ,
        gatt.Characteristic.READABLE,
        gatt.CharacteristicValue(read=read),
    )


async def wait_for_quit() -> None:
    loop = asyncio.get_running_loop()
    while True:
        line = await loop.run_in_executor(None, sys.stdin.readline)
        if line == '' or line.strip() == 'quit':
            return


async def run(args: argparse.Namespace) -> int:
    async with await open_transport(args.transport) as (source, sink):
        device = Device.with_hci(args.name, hci.Address(args.address), source, sink)
        device.add_services([gatt.Service(SERVICE_UUID, [readable(GREETING_UUID, GREETING), readable(LONG_UUID, LONG_VALUE)])])
        connections: list[Connection] = []

        def on_connection(connection: Connection) -> None:
            connections.append(connection)
            emit('connected', peer_address=connection.peer_address.to_string(with_type_qualifier=False),
                 role='central' if connection.role == hci.Role.CENTRAL else 'peripheral', handle=connection.handle)

            def on_disconnection(reason: int) -> None:
                if connection in connections:
                    connections.remove(connection)
                emit('disconnected', reason=reason)

            connection.on('disconnection', on_disconnection)

        device.on('connection', on_connection)
        await device.power_on()
        advertising_data = field(0x01, bytes([0x06])) + field(0x07, bytes(reversed(bytes.fromhex(SERVICE_UUID.replace('-', '')))))
        scan_response = field(0x09, args.name.encode()[:29])
        await device.start_advertising(
            own_address_type=hci.OwnAddressType.RANDOM,
            advertising_data=advertising_data,
            scan_response_data=scan_response,
            advertising_interval_min=args.interval,
            advertising_interval_max=args.interval,
        )
        emit('ready', address=args.address, address_type='random', name=args.name,
             service=SERVICE_UUID, greeting=GREETING_UUID, long=LONG_UUID)
        await wait_for_quit()
        for connection in list(connections):
            try:
                await connection.disconnect()
            except Exception as error:  # the link may be gone already
                logger.info('disconnect at exit: %s', error)
        await device.power_off()
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument('--transport', required=True, help='e.g. tcp-client:127.0.0.1:9000')
    parser.add_argument('--address', default='F1:E2:D3:C4:B5:A6', help='random static address to advertise with')
    parser.add_argument('--name', default='Bumble on Virtual')
    parser.add_argument('--interval', type=float, default=50.0, help='advertising interval in ms')
    parser.add_argument('--log', default='INFO')
    args = parser.parse_args()
    logging.basicConfig(level=args.log.upper(), stream=sys.stderr, format='%(asctime)s %(name)s %(levelname)s %(message)s')
    try:
        return asyncio.run(run(args))
    except Exception as error:
        emit('error', message=f'{type(error).__name__}: {error}')
        logger.exception('host_on_virtual failed')
        return 1


if __name__ == '__main__':
    sys.exit(main())
