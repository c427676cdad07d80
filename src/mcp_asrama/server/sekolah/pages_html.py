"""The pages a person reads while signing in (Indonesian), each one self-contained HTML: the style inline and
allowed by its hash, no script, no font, no image, nothing from elsewhere; never framed. Every value is escaped."""

import base64
import hashlib
from collections.abc import Sequence
from html import escape
from urllib.parse import urlencode

from starlette.responses import HTMLResponse

STYLE = """
body { font: 16px/1.5 system-ui, sans-serif; margin: 0; background: #f1f3f5; color: #1b1f23; }
main { max-width: 30rem; margin: 3rem auto; padding: 1.5rem 2rem; background: #fff; border-radius: 8px; }
h1 { font-size: 1.2rem; margin: 0 0 1rem; }
h2 { font-size: 1.05rem; margin: 0 0 .5rem; }
label { display: block; margin-top: .75rem; }
input[type=email], input[type=password] { width: 100%; box-sizing: border-box; font: inherit; padding: .4rem; }
button, .tombol { font: inherit; padding: .5rem 1.25rem; border-radius: 6px; border: 1px solid #868e96;
  background: #fff; color: inherit; cursor: pointer; text-decoration: none; display: inline-block; }
.utama { background: #2b8a3e; border-color: #2b8a3e; color: #fff; }
.baris { display: flex; gap: .75rem; margin-top: 1.25rem; }
.pesan { color: #c92a2a; font-weight: 600; }
.catatan { color: #5c636a; font-size: .85rem; margin-top: 1.5rem; }
"""
STYLE_HASH = base64.b64encode(hashlib.sha256(STYLE.encode()).digest()).decode()


def page(title: str, body: str, *, status: int = 200, form_to: Sequence[str] = ()) -> HTMLResponse:
    """A whole page; `form_to`: origins a form on it may lead to besides this one (a client's redirect URI)."""
    targets = " ".join(["'self'", *form_to])
    policy = (
        f"default-src 'none'; style-src 'sha256-{STYLE_HASH}'; form-action {targets}; "
        "frame-ancestors 'none'; base-uri 'none'"
    )
    html = (
        '<!doctype html><html lang="id"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title><style>{STYLE}</style></head>"
        f"<body><main><h1>{escape(title)}</h1>{body}</main></body></html>"
    )
    headers = {
        "Content-Security-Policy": policy,
        "Cache-Control": "no-store",
        "X-Frame-Options": "DENY",
        "Referrer-Policy": "same-origin",  # no-referrer would make a browser send `Origin: null` on our own forms
        "X-Content-Type-Options": "nosniff",
    }
    return HTMLResponse(html, status_code=status, headers=headers)


def _hidden(**fields: str) -> str:
    return "".join(f'<input type="hidden" name="{name}" value="{escape(value)}">' for name, value in fields.items())


def login(
    *,
    hidden: dict[str, str],
    csrf: str,
    client_name: str,
    local: bool,
    oidc: bool,
    pesan: str | None = None,
    email: str = "",
) -> HTMLResponse:
    """Sign in: with the school's account (a link to its provider) and/or a local account's email and password;
    `hidden`: what the sign-in is for (carried by the form and the link)."""
    parts = [f"<p>Masuk untuk memberi <b>{escape(client_name)}</b> akses ke data asrama.</p>"]
    if pesan:
        parts.append(f'<p class="pesan" role="alert">{escape(pesan)}</p>')
    if oidc:
        href = escape("/masuk/sekolah?" + urlencode(hidden))
        parts.append(f'<p><a class="tombol utama" id="masuk-sekolah" href="{href}">Masuk dengan akun sekolah</a></p>')
    if local:
        parts.append(
            '<form method="post" action="/masuk">'
            + _hidden(**hidden, csrf=csrf)
            + f'<label>Email<input type="email" name="email" required autocomplete="username" value="{escape(email)}">'
            + '</label><label>Sandi<input type="password" name="sandi" required autocomplete="current-password">'
            + '</label><div class="baris"><button class="utama" type="submit">Masuk</button></div></form>'
        )
    parts.append('<p class="catatan">Belum punya akun? Hubungi admin asrama.</p>')
    return page("Masuk", "".join(parts))


def consent(
    *, permintaan: str, csrf: str, client_name: str, lines: Sequence[str], email: str, form_to: str
) -> HTMLResponse:
    """ "<app> meminta akses: …", with the two buttons."""
    items = "".join(f"<li>{escape(line)}</li>" for line in lines)
    body = (
        f"<p><b>{escape(client_name)}</b> meminta akses atas nama <b>{escape(email)}</b>:</p><ul>{items}</ul>"
        '<form method="post" action="/izin">'
        + _hidden(permintaan=permintaan, csrf=csrf)
        + '<div class="baris"><button class="utama" type="submit" name="keputusan" value="izinkan">Izinkan</button>'
        '<button type="submit" name="keputusan" value="tolak">Tolak</button></div></form>'
        '<p class="catatan">Izinkan hanya aplikasi yang baru saja Anda hubungkan sendiri.</p>'
    )
    return page("Izin akses", body, form_to=[form_to])


def question(text: str) -> str:
    """An usulan's question as HTML: its first line a heading, `- ` lines a list, the others paragraphs."""
    first, *lines = text.split("\n")
    parts, items = [f"<h2>{escape(first)}</h2>"], []
    for line in [*lines, ""]:
        if line.startswith("- "):
            items.append(f"<li>{escape(line[2:])}</li>")
            continue
        if items:
            parts.append(f"<ul>{''.join(items)}</ul>")
            items = []
        if line:
            parts.append(f"<p>{escape(line)}</p>")
    return "".join(parts)


def usulan(*, id_usulan: str, csrf: str, text: str, note: str | None = None) -> HTMLResponse:
    """The question of a write waiting for the person, with the two buttons."""
    body = (
        (f'<p class="pesan" role="status">{escape(note)}</p>' if note else "")
        + question(text)
        + f'<form method="post" action="/usulan/{escape(id_usulan)}">'
        + _hidden(csrf=csrf)
        + '<div class="baris"><button class="utama" type="submit" name="keputusan" value="setuju">Setujui</button>'
        '<button type="submit" name="keputusan" value="tolak">Tolak</button></div></form>'
    )
    return page("Persetujuan pencatatan", body)


def message(title: str, text: str, *, status: int) -> HTMLResponse:
    """A page that only says something: a refusal, an expired request."""
    return page(title, f"<p>{escape(text)}</p>", status=status)
