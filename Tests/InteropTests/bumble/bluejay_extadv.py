# Extended advertising by a Bumble peripheral, for Tests/InteropTests/ExtendedAdvertisingInteropTests.swift.
# Loaded with `--plugin bluejay_extadv` by peer.py, peripheral role (run it with
# --extended-controller so that Bluejay's host scans with the extended commands).
#
# Commands (`"peripheral": k` picks the device, as for the others):
#   extended_advertise {data: hex, connectable: false, sid: 0, interval_ms: 50}
#       stops the device's legacy advertising and starts an advertising set with that data
#       (extended PDUs, not scannable); ack `handle`.
#   stop_extended_advertising
#       stops and removes the set.
#
# Bumble 0.0.236's host sends the data in one LE Set Extended Advertising Data command with
# Operation "complete" whatever its length: more than 251 octets does not fit in one HCI
# command, so this plugin refuses it (Core 6.0, Vol 4, Part E, 7.8.54).

from __future__ import annotations

from typing import Any

from bumble.device import AdvertisingEventProperties, AdvertisingParameters

import peer

MAXIMUM_ONE_COMMAND = 251


def install(role, rig) -> None:
    if not hasattr(role, 'peripherals'):
        return
    sets: dict[int, Any] = {}

    async def extended_advertise(command: dict[str, Any]) -> dict[str, Any]:
        peripheral = role.target(command)
        data = bytes.fromhex(peer.require(command, 'data'))
        if len(data) > MAXIMUM_ONE_COMMAND:
            raise peer.CommandError(f'{len(data)} octets: Bumble\'s host does not fragment past {MAXIMUM_ONE_COMMAND}')
        await peripheral.device.stop_advertising()
        if (old := sets.pop(peripheral.index, None)) is not None:
            await old.stop()
            await old.remove()
        interval = float(command.get('interval_ms', 50))
        parameters = AdvertisingParameters(
            advertising_event_properties=AdvertisingEventProperties(
                is_connectable=bool(command.get('connectable', False)), is_scannable=False),
            primary_advertising_interval_min=interval,
            primary_advertising_interval_max=interval,
            advertising_sid=int(command.get('sid', 0)),
        )
        advertising_set = await peripheral.device.create_advertising_set(
            advertising_parameters=parameters, advertising_data=data)
        sets[peripheral.index] = advertising_set
        return {'handle': advertising_set.advertising_handle}

    async def stop_extended_advertising(command: dict[str, Any]) -> dict[str, Any]:
        peripheral = role.target(command)
        if (advertising_set := sets.pop(peripheral.index, None)) is not None:
            await advertising_set.stop()
            await advertising_set.remove()
        return {}

    role.handlers['extended_advertise'] = extended_advertise
    role.handlers['stop_extended_advertising'] = stop_extended_advertising
