"""The browser page's document (`confirm_page`): one self-contained HTML text, its style and script inline and
allowed by hash in its Content-Security-Policy, which lets it reach nothing but its own origin.

The script takes the secret from the URL's fragment (the browser never sends a fragment), drops it from the address
bar, and posts it in the body of each request: the question (`pertanyaan`), then the person's decision
(`keputusan`). It shows the question as every channel does — the counts first, then each change — with the two
buttons `data-keputusan="setuju"` and `"tolak"`, then the outcome; when the data changed meanwhile it shows the new
question and keeps the new secret in memory only. Text goes in with `textContent` only.
"""

import base64
import hashlib

STYLE = """
body { font: 16px/1.5 system-ui, sans-serif; margin: 0; background: #f1f3f5; color: #1b1f23; }
main { max-width: 44rem; margin: 2rem auto; padding: 1.5rem 2rem; background: #fff; border-radius: 8px; }
h1 { font-size: 1.15rem; margin: 0 0 .75rem; }
ul { padding-left: 1.25rem; }
.tombol { display: flex; gap: .75rem; margin-top: 1.25rem; }
button { font: inherit; padding: .5rem 1.25rem; border-radius: 6px; border: 1px solid #868e96; cursor: pointer; }
button[data-keputusan="setuju"] { background: #2b8a3e; border-color: #2b8a3e; color: #fff; }
button:disabled { opacity: .5; cursor: default; }
#hasil { margin-top: 1.25rem; font-weight: 600; }
#hasil[data-status="ditulis"] { color: #2b8a3e; }
#hasil[data-status="gagal"] { color: #c92a2a; }
.catatan { color: #5c636a; font-size: .85rem; margin-top: 1.5rem; }
"""

SCRIPT = """
"use strict";
const id = decodeURIComponent(location.pathname.split("/")[2] || "");
let current = id;
let rahasia = location.hash.slice(1);
history.replaceState(null, "", location.pathname);  // the secret leaves the address bar; it stays in memory
const question = document.getElementById("pertanyaan");
const outcome = document.getElementById("hasil");
const buttons = Array.from(document.querySelectorAll("button[data-keputusan]"));

function say(status, text) {
  outcome.dataset.status = status;
  outcome.textContent = text;
}

function show(text) {
  question.replaceChildren();
  const lines = text.split("\\n");
  const head = document.createElement("h1");
  head.textContent = lines.shift() || "";
  question.appendChild(head);
  let list = null;
  for (const line of lines) {
    if (line.startsWith("- ")) {
      if (!list) { list = document.createElement("ul"); question.appendChild(list); }
      const item = document.createElement("li");
      item.textContent = line.slice(2);
      list.appendChild(item);
    } else {
      list = null;
      const para = document.createElement("p");
      para.textContent = line;
      question.appendChild(para);
    }
  }
}

function enable(on) { for (const b of buttons) b.disabled = !on; }

async function post(path, body) {
  try {
    const answer = await fetch("/usulan/" + encodeURIComponent(current) + "/" + path, {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
      cache: "no-store", credentials: "omit",
    });
    let data = {};
    try { data = await answer.json(); } catch (e) { data = {}; }
    return { ok: answer.ok, data: data };
  } catch (e) {
    return { ok: false, data: { pesan: "Server tidak menjawab (usulan mungkin sudah kedaluwarsa atau diputuskan); "
      + "tidak ada yang dicatat." } };
  }
}

async function load() {
  if (!rahasia) {
    say("gagal", "Halaman ini dibuka tanpa kuncinya; tidak ada yang dapat diputuskan di sini.");
    return;
  }
  const got = await post("pertanyaan", { rahasia: rahasia });
  if (!got.ok) { say("gagal", got.data.pesan || "Usulan tidak dapat dibuka."); return; }
  show(got.data.pertanyaan);
  if (got.data.status === "menunggu") enable(true);
  else say(got.data.status, got.data.pesan);
}

async function decide(keputusan) {
  enable(false);
  say("memproses", "Memproses…");
  const got = await post("keputusan", { rahasia: rahasia, keputusan: keputusan });
  if (!got.ok) { say("gagal", got.data.pesan || "Keputusan ditolak; tidak ada yang dicatat."); return; }
  const data = got.data;
  say(data.status, data.pesan);
  if (data.status === "berubah" && data.id_usulan_baru && data.rahasia_baru) {
    current = data.id_usulan_baru;
    rahasia = data.rahasia_baru;
    show(data.pertanyaan);
    enable(true);
  }
}

for (const b of buttons) b.addEventListener("click", () => decide(b.dataset.keputusan));
load();
"""

DOCUMENT = f"""<!DOCTYPE html>
<html lang="id"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Persetujuan pencatatan — Data Anak Asrama</title><style>{STYLE}</style></head>
<body><main>
<section id="pertanyaan" aria-live="polite"><h1>Memuat pertanyaan…</h1></section>
<div class="tombol">
<button type="button" data-keputusan="setuju" disabled>Setujui dan catat</button>
<button type="button" data-keputusan="tolak" disabled>Tolak</button>
</div>
<p id="hasil" role="status" data-status="menunggu"></p>
<p class="catatan">Halaman ini dibuka oleh server MCP asrama di komputer ini untuk satu usulan pencatatan.
Setiap keputusan hanya berlaku sekali; tanpa persetujuan tidak ada yang dicatat.</p>
</main><script>{SCRIPT}</script></body></html>
"""


def _hash(source: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(source.encode()).digest()).decode() + "'"


# Nothing but its own inline style and script, and requests to its own origin; no frames, forms, or base URL.
CSP = (
    f"default-src 'none'; script-src {_hash(SCRIPT)}; style-src {_hash(STYLE)}; connect-src 'self'; "
    "img-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
