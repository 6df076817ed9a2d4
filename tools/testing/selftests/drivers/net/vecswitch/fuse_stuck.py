# SPDX-License-Identifier: GPL-2.0
"""A file whose close() blocks: a FUSE mount that never answers FLUSH.

    with StuckFile(directory) as f:
        f.fd        # open, O_RDONLY; closing a copy of it waits for FLUSH
    # leaving the block aborts the connection: every close waiting returns

    s = StuckSender(directory, sock)    # the same, held by a child process
    s.send(data, addr)                  # sock.sendmsg of data with the file
    s.send(data, via=other_socket)      # other_socket.sendmsg, likewise
    s.close()

A process that holds such a file cannot start programs: exec closes it
(or the program does, at exit), and waits.  StuckSender keeps it in a
child of its own, which never starts one.

The kernel sends FLUSH on every close() of a FUSE file, so whoever closes a
descriptor of it (a guest or a switch it was passed to) waits, in an
uninterruptible sleep, until the daemon answers or the connection goes.
Speaks just enough of the protocol (<linux/fuse.h>, 7.x) for one regular
file "f" in the root; needs root, /dev/fuse and a fuse file system.
"""

import array
import ctypes
import errno
import json
import os
import socket
import struct
import threading

FUSE_LOOKUP, FUSE_GETATTR, FUSE_OPEN, FUSE_RELEASE = 1, 3, 14, 18
FUSE_FLUSH, FUSE_INIT, FUSE_INTERRUPT, FUSE_DESTROY = 25, 26, 36, 38
IN_HDR = struct.Struct("<IIQQIIIHH")       # struct fuse_in_header, 40 bytes
OUT_HDR = struct.Struct("<IiQ")            # struct fuse_out_header
ROOT, FILE = 1, 2


def fuse_attr(ino, mode):
    """struct fuse_attr, 88 bytes"""
    return struct.pack("<QQQQQQIIIIIIIIII", ino, 0, 0, 0, 0, 0, 0, 0, 0,
                       mode, 1, 0, 0, 0, 4096, 0)


def available():
    """Can a mount be made here at all?"""
    try:
        with open("/proc/filesystems", encoding="ascii") as f:
            return os.access("/dev/fuse", os.R_OK | os.W_OK) and \
                any(line.split()[-1] == "fuse" for line in f)
    except OSError:
        return False


class StuckFile:
    def __init__(self, directory):
        self.mnt = os.path.join(directory, "fuse-stuck")
        self.dev = -1
        self.fd = -1
        self.flushes = 0

    def __enter__(self):
        os.mkdir(self.mnt)
        self.dev = os.open("/dev/fuse", os.O_RDWR | os.O_CLOEXEC)
        libc = ctypes.CDLL(None, use_errno=True)
        opts = f"fd={self.dev},rootmode=40000,user_id=0,group_id=0".encode()
        if libc.mount(b"fuse-stuck", self.mnt.encode(), b"fuse", 0, opts):
            err = ctypes.get_errno()
            os.close(self.dev)
            os.rmdir(self.mnt)
            raise OSError(err, os.strerror(err), self.mnt)
        threading.Thread(target=self._serve, daemon=True).start()
        self.fd = os.open(os.path.join(self.mnt, "f"), os.O_RDONLY)
        return self

    def __exit__(self, *exc):
        libc = ctypes.CDLL(None, use_errno=True)
        # MNT_DETACH, then the connection goes: stuck closes return
        libc.umount2(self.mnt.encode(), 2)
        os.close(self.dev)
        if self.fd >= 0:
            try:
                os.close(self.fd)
            except OSError:
                pass        # ECONNABORTED: the connection is gone
        os.rmdir(self.mnt)
        return False

    def _reply(self, unique, err, body=b""):
        os.write(self.dev, OUT_HDR.pack(OUT_HDR.size + len(body), -err,
                                        unique) + body)

    def _serve(self):
        while True:
            try:
                req = os.read(self.dev, 1 << 20)
            except OSError:
                return      # unmounted and closed
            if len(req) < IN_HDR.size:
                continue
            _, op, unique, node, *_ = IN_HDR.unpack_from(req)
            body = req[IN_HDR.size:]
            try:
                self._answer(op, unique, node, body)
            except OSError:
                return

    def _answer(self, op, unique, node, body):
        if op == FUSE_INIT:
            major, minor = struct.unpack_from("<II", body)
            # major, minor, max_readahead, flags, max_background,
            # congestion_threshold, max_write, time_gran, the rest zero
            out = struct.pack("<IIIIHHII", 7, min(minor, 31), 0, 0, 16, 12,
                              4096, 1)
            self._reply(unique, 0, out + bytes(64 - len(out)))
        elif op == FUSE_LOOKUP and node == ROOT and body.rstrip(b"\0") == b"f":
            # nodeid, generation, entry and attribute validity
            self._reply(unique, 0, struct.pack("<QQQQII", FILE, 0, 60, 60,
                                               0, 0) + fuse_attr(FILE, 0o100444))
        elif op == FUSE_GETATTR:
            mode = 0o40755 if node == ROOT else 0o100444
            self._reply(unique, 0, struct.pack("<QII", 60, 0, 0) +
                        fuse_attr(node, mode))
        elif op == FUSE_OPEN:
            self._reply(unique, 0, struct.pack("<QIi", 1, 0, 0))
        elif op == FUSE_FLUSH:
            self.flushes += 1       # never answered
        elif op in (FUSE_INTERRUPT, FUSE_DESTROY):
            pass
        elif op == FUSE_RELEASE:
            self._reply(unique, 0)
        else:
            self._reply(unique, errno.ENOSYS)


class StuckSender:
    def __init__(self, directory, sock):
        self.ctl, child = socket.socketpair(socket.AF_UNIX,
                                            socket.SOCK_SEQPACKET)
        self.pid = os.fork()
        if self.pid == 0:
            self.ctl.close()
            code = 1
            try:
                code = self._child(child, directory, sock)
            finally:
                os._exit(code)
        child.close()
        ready = self.ctl.recv(256).decode()
        if ready != "ready":
            self.close()
            raise OSError(errno.EIO, f"FUSE holder: {ready}")

    @staticmethod
    def _child(ctl, directory, sock):
        # the parent's other sockets (a channel's end it passed on, say)
        # must not stay open here
        keep = {0, 1, 2, ctl.fileno(), sock.fileno()}
        for fd in map(int, os.listdir("/proc/self/fd")):
            if fd not in keep:
                try:
                    os.close(fd)
                except OSError:
                    pass
        try:
            stuck = StuckFile(directory).__enter__()
        except OSError as e:
            ctl.send(str(e).encode())
            return 1
        ctl.send(b"ready")
        with_file = [(socket.SOL_SOCKET, socket.SCM_RIGHTS,
                      array.array("i", [stuck.fd]))]
        while True:
            msg, anc, _, _ = ctl.recvmsg(1 << 17, socket.CMSG_SPACE(4))
            if not msg:
                break
            req = json.loads(msg)
            out = sock
            for level, kind, d in anc:
                if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                    out = socket.socket(fileno=array.array("i", d)[0])
            try:
                if req["addr"] is None:
                    out.sendmsg([bytes.fromhex(req["data"])], with_file)
                else:
                    out.sendmsg([bytes.fromhex(req["data"])], with_file, 0,
                                req["addr"])
                answer = "sent"
            except PermissionError:
                answer = "refused"
            except OSError as e:
                answer = f"error {e}"
            if out is not sock:
                out.close()
            ctl.send(answer.encode())
        stuck.__exit__(None, None, None)
        return 0

    def send(self, data, addr=None, via=None):
        """'sent', 'refused' (EPERM) or 'error ...'"""
        req = json.dumps({"data": data.hex(), "addr": addr}).encode()
        anc = [] if via is None else [
            (socket.SOL_SOCKET, socket.SCM_RIGHTS,
             array.array("i", [via.fileno()]))]
        self.ctl.sendmsg([req], anc)
        return self.ctl.recv(256).decode()

    def close(self):
        self.ctl.close()
        os.waitpid(self.pid, 0)
