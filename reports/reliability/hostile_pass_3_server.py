# Hostile cases against a running nmtzoo-serve: prints name, status (or what happened), first words of the answer.
import gzip, json, socket, sys, time, threading, http.client
PORT = int(sys.argv[1])
def raw(data, read_for=5.0, chunks=None, delay=0.0):
    s = socket.create_connection(("127.0.0.1", PORT), timeout=read_for)
    try:
        if chunks is None: s.sendall(data)
        else:
            for c in chunks:
                s.sendall(c)
                if delay: time.sleep(delay)
        out = b""
        end = time.time() + read_for
        while time.time() < end:
            try:
                b = s.recv(65536)
            except socket.timeout: break
            except ConnectionResetError: out += b"<RESET>"; break
            if not b: break
            out += b
        return out
    finally:
        s.close()
def post(path, body, headers=None, raw_body=None):
    c = http.client.HTTPConnection("127.0.0.1", PORT, timeout=60)
    h = {"Content-Type": "application/json"}
    h.update(headers or {})
    c.request("POST", path, body=raw_body if raw_body is not None else json.dumps(body), headers=h)
    r = c.getresponse(); data = r.read()
    return r.status, data[:200].decode("utf-8", "replace").replace("\n", " ")
cases = []
def case(name, fn):
    try: res = fn()
    except Exception as e: res = "EXC " + type(e).__name__ + ": " + str(e)[:150]
    print(f"{name}\t{res}", flush=True)
case("translate_ok", lambda: post("/translate", {"q": "Ein Mann.", "source": "de", "target": "en"}))
case("v1_ok", lambda: post("/v1/translate", {"text": ["Ein Mann."]}))
case("nul_in_q", lambda: post("/translate", {"q": "Ein\u0000Mann", "source": "de", "target": "en"}))
case("nul_in_v1_prefix", lambda: post("/v1/translate", {"text": ["Ein Mann."], "prefix": ["A\u0000"]}))
case("overflow_number", lambda: post("/v1/translate", {"text": ["Ein Mann."], "beam": 1e999}, raw_body='{"text": ["Ein Mann."], "beam": 1e999}'))
case("beam_string", lambda: post("/v1/translate", {"text": ["Ein Mann."], "beam": "5"}))
case("temperature_huge", lambda: post("/v1/translate", {"text": ["Ein Mann."], "sampling": True, "temperature": 1e39}))
case("min_len_huge", lambda: post("/v1/translate", {"text": ["Ein Mann."], "min_len": 500}))
case("prefix_1500", lambda: post("/v1/translate", {"text": ["Ein Mann."], "prefix": [" ".join(["the"]*1500)]}))
case("constraints_list", lambda: post("/v1/translate", {"text": ["Ein Mann."], "constraints": [["dog"]]}))
case("unknown_field", lambda: post("/v1/translate", {"text": ["Ein Mann."], "beem": 5}))
case("not_json", lambda: post("/translate", None, raw_body="{not json"))
case("json_array_body", lambda: post("/translate", None, raw_body="[1,2]"))
case("deep_nesting", lambda: post("/translate", None, raw_body="["*100000 + "]"*100000))
case("too_many_lines", lambda: post("/translate", {"q": "\n".join(["a"]*5000), "source": "de", "target": "en"}))
case("too_long_line", lambda: post("/translate", {"q": "a"*6000, "source": "de", "target": "en"}))
case("wrong_target", lambda: post("/translate", {"q": "Ein Mann.", "source": "de", "target": "fr"}))
case("form_encoded", lambda: post("/translate", None, headers={"Content-Type": "application/x-www-form-urlencoded"}, raw_body="q=Ein+Mann.&source=de&target=en"))
case("multipart", lambda: post("/translate", None, headers={"Content-Type": "multipart/form-data; boundary=x"}, raw_body="--x\r\n\r\n--x--"))
big = gzip.compress(b'{"q": "' + b"a"*50_000_000 + b'"}')
case("gzip_bomb_%dKB" % (len(big)//1024), lambda: post("/translate", None, headers={"Content-Encoding": "gzip"}, raw_body=big))
case("bad_gzip", lambda: post("/translate", None, headers={"Content-Encoding": "gzip"}, raw_body=b"\x1f\x8bgarbage"))
case("unknown_encoding", lambda: post("/translate", None, headers={"Content-Encoding": "zstd"}, raw_body=b"{}"))
def chunked_big():
    head = b"POST /translate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    chunk = b"%x\r\n" % 65536 + b"a"*65536 + b"\r\n"
    s = socket.create_connection(("127.0.0.1", PORT), timeout=10); s.sendall(head); sent = 0
    try:
        while sent < 100_000_000:
            s.sendall(chunk); sent += 65536
    except Exception as e:
        pass
    try: ans = s.recv(200)
    except Exception as e: ans = b"<" + type(e).__name__.encode() + b">"
    s.close(); return f"sent {sent/1e6:.1f} MB, answer {ans[:40]!r}"
case("chunked_100MB", chunked_big)
case("bad_chunk_size", lambda: raw(b"POST /translate HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n")[:60])
case("content_length_lies_short", lambda: raw(b"POST /translate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{}", read_for=15)[:60])
case("content_length_negative", lambda: raw(b"POST /translate HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n")[:60])
case("content_length_huge", lambda: raw(b"POST /translate HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999999999999\r\n\r\n")[:60])
case("both_cl_and_te", lambda: raw(b"POST /translate HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")[:60])
case("header_64KB", lambda: raw(b"GET /health HTTP/1.1\r\nHost: x\r\nX-A: " + b"a"*65536 + b"\r\n\r\n")[:40])
case("pipelined_3", lambda: raw(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n"*3, read_for=2).count(b"HTTP/1.1 200"))
case("http10_no_host", lambda: raw(b"GET /health HTTP/1.0\r\n\r\n", read_for=2)[:30])
case("garbage_request_line", lambda: raw(b"\x00\x01\x02 nonsense\r\n\r\n", read_for=2)[:30])
case("put_translate", lambda: raw(b"PUT /translate HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}", read_for=2)[:30])
case("path_traversal", lambda: raw(b"GET /../../etc/passwd HTTP/1.1\r\nHost: x\r\n\r\n", read_for=2)[:30])
def slow_many():
    socks = []
    for i in range(150):
        s = socket.create_connection(("127.0.0.1", PORT)); s.sendall(b"GET /hea"); socks.append(s)
    t = time.time()
    c = http.client.HTTPConnection("127.0.0.1", PORT, timeout=30); c.request("GET", "/health"); st = c.getresponse().status
    took = time.time() - t
    for s in socks: s.close()
    return f"health {st} in {took*1000:.0f} ms with 150 slow clients"
case("slow_clients_150", slow_many)
def conn_flood():
    socks = []; refused = 0
    for i in range(400):
        try: socks.append(socket.create_connection(("127.0.0.1", PORT), timeout=2))
        except Exception: refused += 1
    ans = raw(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n", read_for=2)[:15]
    for s in socks: s.close()
    return f"opened {len(socks)}, refused {refused}, then health {ans!r}"
case("connection_flood_400", conn_flood)
time.sleep(1)
case("health_after_all", lambda: raw(b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n", read_for=2)[:15])
