#!/usr/bin/env python3
# The Linux guest's agent (see docs/LINUX-GUEST.md): runs the host's commands. It speaks one
# JSON object per line on the virtio-serial port given as the argument (QEMU connects it to a
# Unix socket on the host; Tests/InteropTests/Support/LinuxGuest.swift is the other end).
#
#   agent -> host, once the host is connected: {"event": "hello", "kernel": "6.1.0-…"}
#   host -> agent: {"id": 1, "run": "bluejay adapters --json", "timeout": 60, "env": {...}}
#   agent -> host: {"id": 1, "status": 0, "stdout": "…", "stderr": "…", "timed_out": false,
#                   "seconds": 1.2}
#   host -> agent: {"id": 2, "poweroff": true}  -> {"id": 2, "status": 0}, then the guest ends
#
# `run` is a bash script, run in a session of its own with stdin from /dev/null; requests run
# concurrently, each answered when it ends. At its timeout (default 120 s) its whole process
# group is killed (SIGKILL) and the answer has "timed_out": true and status -9. A negative
# status is the signal that ended the script. Each output keeps its first 4 MiB. A script that
# leaves a process in the background must redirect that process's output, or the answer waits
# for it.
import json
import os
import platform
import signal
import subprocess
import sys
import threading
import time

OUTPUT_LIMIT = 4 << 20
DEFAULT_TIMEOUT = 120.0

write_lock = threading.Lock()


def send(port: int, message: dict) -> None:
    data = (json.dumps(message) + '\n').encode()
    with write_lock:
        view = memoryview(data)
        while view:
            view = view[os.write(port, view):]


def text(data: bytes) -> str:
    return data[:OUTPUT_LIMIT].decode('utf-8', errors='replace')


def run(port: int, request: dict) -> None:
    started = time.monotonic()
    environment = dict(os.environ)
    environment.update({str(key): str(value) for key, value in (request.get('env') or {}).items()})
    timeout = float(request.get('timeout') or DEFAULT_TIMEOUT)
    reply = {'id': request.get('id')}
    try:
        process = subprocess.Popen(
            ['/bin/bash', '-c', str(request['run'])],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env=environment, cwd='/root', start_new_session=True,
        )
        timed_out = False
        try:
            stdout, stderr = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            stdout, stderr = process.communicate()
        reply.update(status=process.returncode, stdout=text(stdout), stderr=text(stderr), timed_out=timed_out)
    except Exception as error:  # the script could not even start: say why
        reply.update(status=-1, stdout='', stderr=f'agent: {error!r}', timed_out=False)
    reply['seconds'] = round(time.monotonic() - started, 3)
    send(port, reply)


def power_off(port: int, request: dict) -> None:
    send(port, {'id': request.get('id'), 'status': 0})
    os.sync()
    with open('/proc/sysrq-trigger', 'w') as trigger:
        trigger.write('o')


def main() -> int:
    port = os.open(sys.argv[1], os.O_RDWR | os.O_CLOEXEC)
    # Blocks until the host side is connected (virtio_console holds writes until then).
    send(port, {'event': 'hello', 'kernel': platform.release()})
    buffer = b''
    while True:
        chunk = os.read(port, 65536)
        if not chunk:
            # The host is not connected (any more): reads return end of file until it is.
            time.sleep(0.05)
            continue
        buffer += chunk
        while b'\n' in buffer:
            line, buffer = buffer.split(b'\n', 1)
            if not line.strip():
                continue
            try:
                request = json.loads(line)
                if not isinstance(request, dict):
                    raise ValueError('not a JSON object')
            except ValueError as error:
                send(port, {'id': None, 'status': -1, 'stdout': '', 'stderr': f'agent: cannot parse {line[:200]!r}: {error}'})
                continue
            if request.get('poweroff'):
                power_off(port, request)
            elif 'run' in request:
                threading.Thread(target=run, args=(port, request), daemon=True).start()
            else:
                send(port, {'id': request.get('id'), 'status': -1, 'stdout': '', 'stderr': 'agent: expected "run" or "poweroff"'})


if __name__ == '__main__':
    sys.exit(main())
