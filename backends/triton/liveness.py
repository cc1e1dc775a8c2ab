#!/usr/bin/env python3
"""A liveness check that runs an inference, for a Triton server serving
aotrun models (docs/SERVING.md, "Probes").

/v2/health/live and /v2/health/ready answer from the HTTP front end alone:
a server whose inference path is broken (a wedged model, a dead gRPC front
end after a crash in another thread) can keep answering them 200. This
probe asks the model for its metadata, sends one request of zeros over HTTP
(KServe v2 JSON; variable dims as 1) and succeeds only if the response
carries every output. Standard library only, so it runs in the server's own
image.

    liveness.py --url HOST:PORT --model NAME [--timeout SECONDS]
Exit 0: alive; 1: the inference failed or timed out (the reason on stdout).
"""

import argparse
import json
import sys
import urllib.error
import urllib.request

ZERO = {"BOOL": False, "BYTES": ""}


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--url", required=True, help="host:port of Triton's HTTP endpoint")
    p.add_argument("--model", required=True)
    p.add_argument("--timeout", type=float, default=10.0)
    a = p.parse_args()
    base = "http://%s/v2/models/%s" % (a.url, a.model)
    try:
        with urllib.request.urlopen(base, timeout=a.timeout) as r:
            meta = json.loads(r.read())
        inputs = []
        for i in meta["inputs"]:
            shape = [d if d > 0 else 1 for d in i["shape"]]
            n = 1
            for d in shape:
                n *= d
            inputs.append({"name": i["name"], "shape": shape, "datatype": i["datatype"],
                           "data": [ZERO.get(i["datatype"], 0)] * n})
        body = json.dumps({"inputs": inputs}).encode()
        req = urllib.request.Request(base + "/infer", data=body, method="POST",
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=a.timeout) as r:
            answer = json.loads(r.read())
        got = {o["name"] for o in answer.get("outputs", [])}
        want = {o["name"] for o in meta["outputs"]}
        if not want <= got:
            print("not alive: %s answered without outputs %s" % (a.model, sorted(want - got)))
            return 1
    except (OSError, ValueError, KeyError, urllib.error.URLError) as e:
        print("not alive: %s: %s" % (a.model, e))
        return 1
    print("alive: %s answered an inference (%d outputs)" % (a.model, len(got)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
