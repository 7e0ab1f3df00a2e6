# A password-checking service for the Bluejay API's interop tests, loaded by
# `peer.py --plugin bluejay_auth`.
#
# Service 6E400201-B5A3-F393-E0A9-E50E24DCCA9E, on every peripheral of the rig:
#   6E400202-... user auth   (write, notify)
#   6E400203-... admin auth  (write, notify)
# Writing a password to one of them answers, on the same characteristic, one notification of
# one byte: 0x01 when the password is that role's, 0x02 otherwise. The user password is
# "open sesame", the admin password "hunter2". Each answer is reported on stdout:
#   {"event":"auth_answered","peripheral":k,"uuid":"6E400202-...","accepted":true}
# The characteristics are also ordinary rig stores: `stream`/`notify` work on them.

from __future__ import annotations

import asyncio

from bumble import gatt

import peer

AUTH_SERVICE = '6E400201-B5A3-F393-E0A9-E50E24DCCA9E'
USER_AUTH = '6E400202-B5A3-F393-E0A9-E50E24DCCA9E'
ADMIN_AUTH = '6E400203-B5A3-F393-E0A9-E50E24DCCA9E'
PASSWORDS = {USER_AUTH: b'open sesame', ADMIN_AUTH: b'hunter2'}
ACCEPTED = 0x01
REFUSED = 0x02


def install(role, rig) -> None:
    for peripheral in getattr(role, 'peripherals', []):
        add_auth_service(peripheral, rig)


def add_auth_service(peripheral, rig) -> None:
    characteristics = []
    for uuid in (USER_AUTH, ADMIN_AUTH):
        characteristics.append(
            peripheral.store(
                uuid,
                b'',
                peer.Props.WRITE | peer.Props.NOTIFY,
                readable=False,
                on_write=answerer(peripheral, rig, uuid),
            )
        )
    peripheral.device.add_services([gatt.Service(AUTH_SERVICE, characteristics)])


def answerer(peripheral, rig, uuid: str):
    def on_write(connection, value: bytes) -> None:
        accepted = value == PASSWORDS[uuid]

        async def answer() -> None:
            characteristic = peripheral.stores[uuid].characteristic
            if not peripheral.subscribed(connection, characteristic, 0x01):
                peer.emit('warning', peripheral=peripheral.index, message=f'auth write on {uuid} without a subscription')
                return
            await peripheral.device.gatt_server.notify_subscriber(
                connection, characteristic, bytes([ACCEPTED if accepted else REFUSED])
            )
            await connection.drain()
            peer.emit('auth_answered', peripheral=peripheral.index, uuid=uuid, accepted=accepted)

        # After the handler returns, so that the Write Response goes out before the answer.
        asyncio.get_running_loop().call_soon(lambda: rig.spawn(answer()))

    return on_write
