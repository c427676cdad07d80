"""The confirm view (`ui://asrama/konfirmasi`): its CSS and script, composed by `page()` into the views' document.

A write's result that carries an usulan (`_meta["asrama/usulan"]`: its id and single-use `kunci`, given to the view
and not to the model) is drawn as the question — its first line (the counts) in bold, each "- nama (id): lama →
baru" line as a list item — with two buttons, `data-keputusan="setuju"` and `"tolak"`. A press disables both and
asks the host to call the app-only tool `putuskan_usulan` with the id, the key and the decision; the outcome is
shown (written, declined, an error), and `berubah` (the data changed) shows the new question with buttons again,
under the new usulan's key. The conversation is told in one sentence with the status and the usulan's id, never
the key: `ui/update-model-context`, or `ui/message` where the host takes only that. A result without an usulan in
its `_meta` (written through a form, a page in the browser, text only) is shown as text, without buttons.

The script runs inside page.py's closure: it uses `root`, `el`, `request`, `resize` and `host` (the host's
`ui/initialize` answer) from there and adds its drawing to `DRAW`.
"""

CSS = """
div.pertanyaan p { margin: 0 0 6px; }
p.ringkas, p.hasil { font-weight: 600; }
p.galat { color: var(--alpa); }
ul.perubahan { margin: 4px 0 8px; padding-left: 20px; }
div.tombol { display: flex; gap: 8px; margin: 12px 0 4px; }
button { font: inherit; padding: 6px 14px; border-radius: 6px; border: 1px solid var(--grid); cursor: pointer;
  color: var(--fg); background: var(--bg); }
button[data-keputusan="setuju"] { color: #fff; background: var(--hadir); border-color: var(--hadir); }
button:disabled { opacity: 0.5; cursor: default; }
"""

SCRIPT = """
  const USULAN = "asrama/usulan";
  const TITLE = "Persetujuan pencatatan";
  const BUTTONS = [["setuju", "Setuju, catat"], ["tolak", "Tolak"]];
  const SHOWN = {
    ditulis: "Disetujui dan sudah dicatat.",
    ditolak: "Ditolak; tidak ada yang dicatat.",
    berubah: "Data berubah sebelum disetujui; tidak ada yang dicatat.",
  };
  const TOLD = {
    ditulis: "pengguna menyetujuinya di tampilan persetujuan dan sudah dicatat.",
    ditolak: "pengguna menolaknya di tampilan persetujuan; tidak ada yang dicatat.",
    berubah: "data berubah sebelum disetujui; tidak ada yang dicatat.",
  };

  function textOf(result) {
    return ((result && result.content) || []).filter(function (c) { return c.type === "text"; })
      .map(function (c) { return c.text; }).join("\\n");
  }
  function usulanOf(result) {
    const found = result && result._meta && result._meta[USULAN];
    return found && typeof found.id === "string" && typeof found.kunci === "string" ? found : null;
  }
  // The question: its first line (the counts) in bold, "- ..." lines as a list, the other lines as paragraphs.
  function question(text) {
    const box = el("div", { class: "pertanyaan" });
    let list = null;
    String(text).split("\\n").forEach(function (line, i) {
      if (line.startsWith("- ")) {
        if (!list) list = box.appendChild(el("ul", { class: "perubahan" }));
        list.appendChild(el("li", {}, line.slice(2)));
      } else {
        list = null;
        box.appendChild(el("p", i === 0 ? { class: "ringkas" } : {}, line));
      }
    });
    return box;
  }
  // One sentence for the model: by ui/update-model-context, or ui/message where the host takes only that.
  function tell(text) {
    const content = [{ type: "text", text: text }];
    const caps = host.hostCapabilities || {};
    const message = function () { return request("ui/message", { role: "user", content: content }); };
    const sent = caps.updateModelContext || !caps.message
      ? request("ui/update-model-context", { content: content }).catch(message) : message();
    sent.catch(function () {});  // the outcome is on screen either way
  }
  function ask(usulan, pertanyaan) {
    const status = el("p", { class: "status", role: "status" });
    const buttons = el("div", { class: "tombol" });
    BUTTONS.forEach(function (b) {
      const button = el("button", { type: "button", "data-keputusan": b[0] }, b[1]);
      button.addEventListener("click", function () { decide(usulan, b[0], buttons, status); });
      buttons.appendChild(button);
    });
    return [question(pertanyaan), buttons, status];
  }
  function decide(usulan, keputusan, buttons, status) {
    const all = Array.from(buttons.querySelectorAll("button"));
    all.forEach(function (b) { b.disabled = true; });
    status.className = "status";
    status.textContent = "Mengirim keputusan\\u2026";
    const call = { name: "putuskan_usulan",
      arguments: { id_usulan: usulan.id, kunci: usulan.kunci, keputusan: keputusan } };
    function failed(text) {  // nothing was decided: say why, and let the person try again
      status.className = "status galat";
      status.textContent = "Keputusan tidak diterima: " + (text || "host tidak meneruskannya.");
      all.forEach(function (b) { b.disabled = false; });
      resize();
      tell("Keputusan pengguna atas usulan " + usulan.id + " tidak diterima: " + (text || "host tidak meneruskannya."));
    }
    request("tools/call", call).then(function (result) {
      const data = (result && result.structuredContent) || {};
      if (!result || result.isError || !data.status) { failed(textOf(result)); return; }
      decided(usulan.id, data, usulanOf(result));
    }, function (error) { failed(error && error.message); });
  }
  function decided(id, data, next) {
    const again = data.status === "berubah" && next && data.pertanyaan;
    let shown = SHOWN[data.status] || data.pesan, told = TOLD[data.status] || data.pesan;
    if (again) {
      shown += " Putuskan lagi pertanyaan terbaru di bawah.";
      told += " Pengguna diminta memutuskan usulan baru " + next.id + ".";
    }
    root.replaceChildren(el("h1", {}, TITLE), el("p", { class: "hasil", "data-status": data.status }, shown));
    if (again) ask(next, data.pertanyaan).forEach(function (node) { root.appendChild(node); });
    resize();
    tell("Usulan " + id + " " + data.status + ": " + told);
  }
  DRAW.konfirmasi = function (result) {
    const data = (result && result.structuredContent) || {};
    const usulan = usulanOf(result);
    root.appendChild(el("h1", {}, TITLE));
    if (usulan && data.pertanyaan && !result.isError) {
      ask(usulan, data.pertanyaan).forEach(function (node) { root.appendChild(node); });
      return;
    }
    root.appendChild(el("p", { class: "pesan" }, data.pesan || textOf(result) || "Tidak ada yang perlu diputuskan."));
    if (data.pertanyaan) root.appendChild(question(data.pertanyaan));
  };
"""
