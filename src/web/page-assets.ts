import { raw } from "hono/html";

// Colours keep at least 4.5:1 contrast against their background; focus stays visible.
export const PAGE_STYLE = raw(`
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 system-ui,sans-serif;color:#1a1a1a;background:#fff}
header{display:flex;justify-content:space-between;align-items:center;padding:.75rem 1rem;border-bottom:1px solid #767676}
h1{font-size:1.4rem;margin:0}h2{font-size:1.15rem;margin:1.2rem 0 .4rem}
main{max-width:40rem;margin:0 auto;padding:0 1rem 2rem}
label{display:block;margin-top:.6rem;font-weight:600}
input,textarea{width:100%;padding:.5rem;font:inherit;border:1px solid #595959;border-radius:4px}
button,.button{display:inline-block;margin-top:.7rem;padding:.55rem 1.1rem;font:inherit;color:#fff;background:#0b5cad;border:0;border-radius:4px;text-decoration:none;cursor:pointer;min-height:44px}
button:focus-visible,.button:focus-visible,input:focus-visible,textarea:focus-visible{outline:3px solid #b35900;outline-offset:2px}
#history{list-style:none;padding:0}#history li{padding:.35rem 0;border-bottom:1px solid #ddd}
.error{color:#a10000}.ok{color:#0a6b2d}
#answer{white-space:pre-wrap}
`);

/**
 * The page's behaviour. Errors are shown in the documented error shape's `message`; a 401 means
 * the session has ended (the web app has already cleared its cookies).
 */
export const PAGE_SCRIPT = raw(`
(() => {
  const $ = (id) => document.getElementById(id);
  const notice = (text) => { $("notice").textContent = text; };
  const ended = () => { notice("Your session has ended. Sign in again."); setTimeout(() => location.assign("/"), 1500); };
  const readError = async (res) => { try { const b = await res.json(); return b.message || b.error || ("error " + res.status); } catch { return "error " + res.status; } };
  async function call(path, init) {
    const res = await fetch(path, { credentials: "same-origin", ...init });
    if (res.status === 401) { ended(); throw new Error("signed out"); }
    return res;
  }
  async function loadOverview() {
    const res = await call("/api/wallet/overview");
    if (!res.ok) return notice(await readError(res));
    const o = await res.json();
    $("balance").textContent = String(o.balance);
    $("tier").textContent = o.tier;
  }
  async function loadHistory() {
    const res = await call("/api/wallet/transactions?limit=10");
    if (!res.ok) return notice(await readError(res));
    const { transactions } = await res.json();
    const list = $("history");
    list.replaceChildren(...transactions.map((t) => {
      const li = document.createElement("li");
      const who = t.counterparty && t.counterparty.displayName ? t.counterparty.displayName : t.type;
      li.textContent = (t.signedAmount > 0 ? "+" : "") + t.signedAmount + " · " + who + (t.note ? " · " + t.note : "");
      return li;
    }));
    if (transactions.length === 0) { const li = document.createElement("li"); li.textContent = "No transactions yet."; list.append(li); }
  }
  $("transfer").addEventListener("submit", async (e) => {
    e.preventDefault();
    const form = e.currentTarget; const out = $("transfer-result");
    const body = { toUserId: form.toUserId.value.trim(), amount: Number(form.amount.value) };
    if (form.note.value.trim()) body.note = form.note.value.trim();
    out.className = ""; out.textContent = "Sending…";
    try {
      const res = await call("/api/wallet/transfer", { method: "POST", headers: { "content-type": "application/json", "idempotency-key": crypto.randomUUID() }, body: JSON.stringify(body) });
      if (res.ok) { const r = await res.json(); out.className = "ok"; out.textContent = "Sent " + r.transferredAmount + " coins. New balance: " + r.balance + "."; form.reset(); await Promise.all([loadOverview(), loadHistory()]); }
      else { out.className = "error"; out.textContent = await readError(res); }
    } catch (err) { if (err.message !== "signed out") { out.className = "error"; out.textContent = "The transfer could not be sent."; } }
  });
  $("assistant").addEventListener("submit", async (e) => {
    e.preventDefault();
    const out = $("answer"); out.textContent = "";
    try {
      const res = await call("/api/agent", { method: "POST", headers: { "content-type": "application/json", accept: "text/event-stream" }, body: JSON.stringify({ message: e.currentTarget.message.value }) });
      if (!res.ok) { out.textContent = await readError(res); return; }
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      let buffer = "";
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        buffer += value;
        let cut;
        while ((cut = buffer.indexOf("\\n\\n")) >= 0) {
          const event = buffer.slice(0, cut); buffer = buffer.slice(cut + 2);
          const data = event.split("\\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trim()).join("\\n");
          try { const parsed = JSON.parse(data); if (typeof parsed.text === "string") out.textContent += parsed.text; } catch { if (data) out.textContent += data; }
        }
      }
    } catch (err) { if (err.message !== "signed out") out.textContent = "The assistant could not be reached."; }
  });
  loadOverview(); loadHistory();
})();
`);
