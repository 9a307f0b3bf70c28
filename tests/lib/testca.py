"""A test certificate authority (openssl): its certificate and, signed by
it, one certificate per DNS name, for TLS servers the tests run on names
of their own.

    certs = make_certs(work, ["provider.test", "api.anthropic.com"])
    certs["ca"]; certs["provider.test"] == (crt, key)
"""
import os
import subprocess


def make_certs(work, names, alt=None):
    """alt: {name: [more DNS names]} for a certificate valid for several."""
    run = lambda *a: subprocess.run(list(a), check=True, capture_output=True)  # noqa: E731
    ca_key, ca = os.path.join(work, "ca.key"), os.path.join(work, "ca.crt")
    run("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", ca_key, "-out", ca, "-days", "2",
        "-subj", "/CN=ward test CA", "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign")
    out = {"ca": ca}
    for name in names:
        key, csr, crt, ext = (os.path.join(work, f"{name}.{x}") for x in ("key", "csr", "crt", "ext"))
        with open(ext, "w") as f:
            f.write("subjectAltName=" + ",".join(f"DNS:{n}" for n in [name] + (alt or {}).get(name, [])) + "\n")
        run("openssl", "req", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", csr, "-subj", f"/CN={name}")
        run("openssl", "x509", "-req", "-in", csr, "-CA", ca, "-CAkey", ca_key, "-CAcreateserial", "-out", crt,
            "-days", "2", "-extfile", ext)
        out[name] = (crt, key)
    return out
