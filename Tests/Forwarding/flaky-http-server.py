"""A flaky HTTP server on 127.0.0.1, for the forwarding test.

Usage: flaky-http-server.py PORT_FILE BODIES_FILE

Listens on a free port of 127.0.0.1 and writes the port to PORT_FILE. Answers
the first two POSTs with 503, drops the connection in the middle of the third
one's body, and from then on appends each body it receives whole to
BODIES_FILE and answers 200. Stops after 120 s, or on SIGTERM.
"""
import http.server
import os
import signal
import sys
import threading

port_file, bodies_file = sys.argv[1], sys.argv[2]
requests = 0
lock = threading.Lock()


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        global requests
        with lock:
            requests += 1
            number = requests
        length = int(self.headers.get("Content-Length", "0"))
        if number == 3:
            # Read half the body, then hang up without an answer.
            self.rfile.read(length // 2)
            self.close_connection = True
            self.connection.shutdown(2)
            return
        body = self.rfile.read(length)
        if number <= 2:
            self.send_response(503)
            self.end_headers()
            return
        with lock, open(bodies_file, "ab") as out:
            out.write(body)
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
with open(port_file + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
os.rename(port_file + ".tmp", port_file)
signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown).start())
# A test runner may start this with SIGTERM blocked.
signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
deadline = threading.Timer(120, server.shutdown)
deadline.daemon = True
deadline.start()
server.serve_forever()
