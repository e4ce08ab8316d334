"""HTTPS for the classroom: browsers give the microphone only to a secure page.

``localhost`` counts as secure, but a phone on the school's Wi-Fi opening
``http://192.168.1.20:7860`` does not, so ``--https`` serves TLS: with the user's own
certificate (``--ssl-certfile``/``--ssl-keyfile``), or with a self-signed one made at first start
(the ``cryptography`` package; an EC P-256 key) and kept in the state folder
(``$HYMT_STATE_DIR``, else ``$XDG_STATE_HOME/hunyuan-webui``, else
``~/.local/state/hunyuan-webui``), valid for ``localhost``, this machine's name and its
addresses. When the LAN address changes, a new one is made. A browser warns once about a
certificate it does not know; the fingerprint printed at start lets the teacher check it.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import socket
from pathlib import Path

from hunyuan_webui.urls import lan_ip

VALID_DAYS = 825  # the longest validity browsers accept for a server certificate


def state_dir() -> Path:
    if os.environ.get("HYMT_STATE_DIR"):
        return Path(os.environ["HYMT_STATE_DIR"])
    base = os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state"
    return Path(base) / "hunyuan-webui"


def names() -> tuple[list[str], list[str]]:
    """The DNS names and IP addresses the certificate is for."""
    dns = ["localhost"]
    host = socket.gethostname()
    if host and host not in dns:
        dns.append(host)
    ips = ["127.0.0.1", "::1"]
    if (ip := lan_ip()) and ip not in ips:
        ips.append(ip)
    return dns, ips


def self_signed(folder: Path | None = None) -> tuple[Path, Path]:
    """The self-signed certificate and key in ``folder`` (made now if missing, or if it does
    not name this machine's current addresses)."""
    folder = (folder or state_dir()) / "tls"
    cert, key = folder / "cert.pem", folder / "key.pem"
    dns, ips = names()
    if cert.is_file() and key.is_file() and _covers(cert, dns, ips):
        return cert, key
    folder.mkdir(parents=True, exist_ok=True)
    cert_pem, key_pem = _make(dns, ips)
    key.touch(mode=0o600)
    key.write_bytes(key_pem)
    os.chmod(key, 0o600)
    cert.write_bytes(cert_pem)
    return cert, key


def fingerprint(cert: Path) -> str:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes

    digest = x509.load_pem_x509_certificate(cert.read_bytes()).fingerprint(hashes.SHA256())
    return ":".join(f"{b:02X}" for b in digest)


def _covers(cert: Path, dns: list[str], ips: list[str]) -> bool:
    from cryptography import x509

    try:
        loaded = x509.load_pem_x509_certificate(cert.read_bytes())
        san = loaded.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except (ValueError, x509.ExtensionNotFound):
        return False
    have_ips = {str(ip) for ip in san.get_values_for_type(x509.IPAddress)}
    left = loaded.not_valid_after_utc - datetime.datetime.now(datetime.UTC)
    return set(ips) <= have_ips and set(dns) <= set(san.get_values_for_type(x509.DNSName)) \
        and left > datetime.timedelta(days=7)


def _make(dns: list[str], ips: list[str]) -> tuple[bytes, bytes]:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"Hunyuan-MT on {dns[-1]}")])
    now = datetime.datetime.now(datetime.UTC)
    san = [x509.DNSName(d) for d in dns] + [x509.IPAddress(ipaddress.ip_address(i)) for i in ips]
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=VALID_DAYS))
            .add_extension(x509.SubjectAlternativeName(san), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]),
                           critical=False)
            .sign(key, hashes.SHA256()))
    return (cert.public_bytes(serialization.Encoding.PEM),
            key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                              serialization.NoEncryption()))


def files(https: bool, certfile: str | None, keyfile: str | None) -> tuple[Path, Path] | None:
    """The certificate and key to serve with (None: plain HTTP)."""
    if certfile and keyfile:
        return Path(certfile), Path(keyfile)
    return self_signed() if https else None
