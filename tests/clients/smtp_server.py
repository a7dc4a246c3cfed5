#!/usr/bin/env python3
"""A real SMTP server for Saito's notice tests (Debian's python3-aiosmtpd).

Listens on 127.0.0.1:PORT and stores every message it accepts as a file in --dir (NNNN.eml, written to a
temporary name first and renamed, so a reader never sees half a message). It can play a failing mail server:
--refuse-first N answers 451 (try again later) to the first N DATA commands; --reject-all answers 550 to every
DATA command; --reject-recipient answers 550 to every RCPT TO, naming the address as real servers do. Prints "READY <port>" on stdout once it accepts connections; stops on SIGTERM or SIGINT.
"""

import argparse
import os
import signal
import sys
import threading

from aiosmtpd.controller import Controller


class StoringHandler:
    def __init__(self, directory, refuse_first, reject_all, reject_recipient):
        self.directory = directory
        self.refuse_left = refuse_first
        self.reject_all = reject_all
        self.reject_recipient = reject_recipient
        self.stored = 0
        self.lock = threading.Lock()

    async def handle_RCPT(self, server, session, envelope, address, rcpt_options):
        if self.reject_recipient:
            print("REJECTED RCPT", flush=True)
            return f"550 5.1.1 <{address}>: Recipient address rejected: User unknown in virtual mailbox table"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        with self.lock:
            if self.reject_all:
                print("REJECTED", flush=True)
                return "550 5.7.1 Message rejected by the test server"
            if self.refuse_left > 0:
                self.refuse_left -= 1
                print("REFUSED", flush=True)
                return "451 4.3.0 Test server busy, try again later"
            self.stored += 1
            number = self.stored
        name = os.path.join(self.directory, f"{number:04d}.eml")
        with open(name + ".tmp", "wb") as f:
            f.write(envelope.original_content or envelope.content)
        os.replace(name + ".tmp", name)
        print(f"STORED {name}", flush=True)
        return "250 2.0.0 OK"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--dir", required=True, help="folder the accepted messages are written to")
    parser.add_argument("--refuse-first", type=int, default=0, help="answer 451 to the first N DATA commands")
    parser.add_argument("--reject-all", action="store_true", help="answer 550 to every DATA command")
    parser.add_argument("--reject-recipient", action="store_true", help="answer 550 naming the address to every RCPT TO")
    args = parser.parse_args()

    os.makedirs(args.dir, exist_ok=True)
    handler = StoringHandler(args.dir, args.refuse_first, args.reject_all, args.reject_recipient)
    controller = Controller(handler, hostname="127.0.0.1", port=args.port)
    controller.start()  # returns once the server accepts connections
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    print(f"READY {args.port}", flush=True)
    try:
        stop.wait()
    finally:
        controller.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
