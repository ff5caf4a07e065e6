import { html } from "hono/html";
import { PAGE_SCRIPT, PAGE_STYLE } from "./page-assets";

/**
 * The member's page, rendered on the server with the inline script and style its CSP nonce
 * allows; no framework and nothing from another origin. The script reads the wallet through the
 * web app's own routes, so the session cookies are all it needs.
 */
export function memberPage(nonce: string, signedIn: boolean) {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Your wallet</title>
<style nonce="${nonce}">${PAGE_STYLE}</style>
</head>
<body>
<header><h1>Wallet</h1>${signedIn
    ? html`<form method="post" action="/api/auth/logout"><button type="submit" id="sign-out">Sign out</button></form>`
    : ""}</header>
<main>
${signedIn ? signedInView() : html`<section aria-labelledby="welcome"><h2 id="welcome">Welcome</h2><p>Sign in to see your coins, send them and ask the assistant.</p><p><a class="button" id="sign-in" href="/api/auth/login?returnTo=%2F">Sign in</a></p></section>`}
</main>
${signedIn ? html`<script nonce="${nonce}">${PAGE_SCRIPT}</script>` : ""}
</body>
</html>`;
}

function signedInView() {
  return html`<section aria-labelledby="balance-title">
<h2 id="balance-title">Balance</h2>
<p><span id="balance" aria-live="polite">…</span> coins · tier <span id="tier">…</span></p>
</section>
<section aria-labelledby="transfer-title">
<h2 id="transfer-title">Send coins</h2>
<form id="transfer">
<label for="to">Recipient's user id</label>
<input id="to" name="toUserId" required autocomplete="off" spellcheck="false">
<label for="amount">Amount (coins)</label>
<input id="amount" name="amount" type="number" min="1" step="1" required inputmode="numeric">
<label for="note">Note (optional)</label>
<input id="note" name="note" maxlength="200">
<button type="submit">Send</button>
<p id="transfer-result" role="status" aria-live="polite"></p>
</form>
</section>
<section aria-labelledby="history-title">
<h2 id="history-title">Recent transactions</h2>
<ul id="history"></ul>
</section>
<section aria-labelledby="assistant-title">
<h2 id="assistant-title">Assistant</h2>
<form id="assistant">
<label for="question">Your question</label>
<textarea id="question" name="message" rows="2" required></textarea>
<button type="submit">Ask</button>
</form>
<p id="answer" aria-live="polite"></p>
</section>
<p id="notice" role="alert"></p>`;
}

export function signInFailedPage(nonce: string, reason: string) {
  return html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Sign-in failed</title>
<style nonce="${nonce}">${PAGE_STYLE}</style></head>
<body><main><h1>Sign-in failed</h1><p>${reason}</p><p><a class="button" href="/api/auth/login">Try again</a></p></main></body></html>`;
}
