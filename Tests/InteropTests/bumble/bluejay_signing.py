# Signed writes for the interop tests (Tests/InteropTests/SignedWriteInteropTests.swift).
# Loaded with `--plugin bluejay_pairing --plugin bluejay_signing` by peer.py, peripheral role.
#
# Bumble 0.0.236 neither signs nor checks ATT_SIGNED_WRITE_CMD (its GATT server ignores the
# opcode; its ATT codec leaves the signature inside the value). So this plugin checks them
# itself, with Bumble's AES-CMAC and the CSRK Bumble stored from the pairing: an independent
# reading of Core 6.0, Vol 3, Part H, 2.4.5 (MAC = the 64 most significant bits of
# AES-CMAC_CSRK(m || SignCounter), the octet string reversed into AES-CMAC; on the wire the
# SignCounter then the MAC, least significant octet first).
#
# Every peripheral gets a service 6E400311-B5A3-F393-E0A9-E50E24DCCA9E with one characteristic
# 6E400312-... (properties: read, Authenticated Signed Writes).
# Events:
#   {"event":"signed_write","ok":bool,"why":text,"counter":N,"value":hex}

from __future__ import annotations

import asyncio
import logging
import sys

from bumble import att, gatt
from bumble.crypto import aes_cmac

import peer

logger = logging.getLogger('signing')
emit = getattr(sys.modules['__main__'], 'emit', peer.emit)

SERVICE = '6E400311-B5A3-F393-E0A9-E50E24DCCA9E'
SIGNED = '6E400312-B5A3-F393-E0A9-E50E24DCCA9E'
SIGNATURE_LENGTH = 12


def signature_mac(csrk_wire: bytes, pdu: bytes, counter: bytes) -> bytes:
    """The 8 MAC octets as they travel, for a CSRK as SMP carried it (least significant first)."""
    cmac = aes_cmac((pdu + counter)[::-1], csrk_wire[::-1])
    return cmac[:8][::-1]


def install(role, rig) -> None:
    for peripheral in getattr(role, 'peripherals', []):
        device = peripheral.device
        characteristic = gatt.Characteristic(
            SIGNED, gatt.Characteristic.Properties.READ | gatt.Characteristic.Properties.AUTHENTICATED_SIGNED_WRITES,
            gatt.Characteristic.READABLE | gatt.Characteristic.WRITEABLE, b'\x00')
        device.add_services([gatt.Service(SERVICE, [characteristic])])
        lowest = {'next': 0}

        async def check(pdu, device=device, characteristic=characteristic, lowest=lowest) -> None:
            data = bytes(pdu.attribute_value)
            if len(data) < SIGNATURE_LENGTH:
                emit('signed_write', ok=False, why='too short', counter=-1, value=data.hex())
                return
            value, signature = data[:-SIGNATURE_LENGTH], data[-SIGNATURE_LENGTH:]
            counter = int.from_bytes(signature[:4], 'little')
            stored = [keys for _name, keys in await device.keystore.get_all() if keys.csrk is not None]
            if not stored:
                emit('signed_write', ok=False, why='no CSRK stored', counter=counter, value=value.hex())
                return
            signed = bytes([att.Opcode.ATT_SIGNED_WRITE_COMMAND]) + pdu.attribute_handle.to_bytes(2, 'little') + value
            if signature_mac(stored[0].csrk.value, signed, signature[:4]) != signature[4:]:
                emit('signed_write', ok=False, why='bad MAC', counter=counter, value=value.hex())
                return
            if pdu.attribute_handle != characteristic.handle:
                emit('signed_write', ok=False, why='wrong handle', counter=counter, value=value.hex())
                return
            if counter < lowest['next']:
                emit('signed_write', ok=False, why='old counter', counter=counter, value=value.hex())
                return
            lowest['next'] = counter + 1
            characteristic.value = value
            emit('signed_write', ok=True, why='', counter=counter, value=value.hex())

        def on_signed_write(_bearer, pdu, check=check) -> None:
            asyncio.get_running_loop().create_task(check(pdu))

        # The GATT server looks its handlers up by name (on_<pdu name>).
        device.gatt_server.on_att_signed_write_command = on_signed_write
