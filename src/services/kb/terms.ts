/**
 * Term handling shared by indexing and queries: lower case, accents folded, stop words dropped,
 * and a light suffix strip so "payments", "paying" and "paid" meet "payment" and "pay".
 */
const STOP = new Set(
  "a an and are as at be been but by can could do does did for from had has have how i if in into is it its me my no not of on or our so that the their them then there these they this to too was we were what when where which who why will with would you your yours am im ive id dont cant doesnt please hi hello help thanks thank".split(" "),
);

// Maps, not object literals: a word such as "constructor" or "__proto__" must not find a built-in.
const IRREGULAR = new Map(Object.entries({ paid: "pay", bought: "buy", sent: "send", spent: "spend", went: "go", got: "get", lost: "lose", children: "child", men: "man", women: "woman" }));

export function stem(word: string): string {
  const irregular = IRREGULAR.get(word);
  if (irregular) return irregular;
  if (word.length > 5 && word.endsWith("ies")) return `${word.slice(0, -3)}y`;
  if (word.length > 5 && word.endsWith("ing")) return word.slice(0, -3);
  if (word.length > 4 && word.endsWith("ed")) return word.slice(0, -2);
  if (word.length > 4 && word.endsWith("es") && /(ss|sh|ch|x)es$/.test(word)) return word.slice(0, -2);
  if (word.length > 3 && word.endsWith("s") && !word.endsWith("ss") && !word.endsWith("us")) return word.slice(0, -1);
  return word;
}

export function processTerm(term: string): string | null {
  const folded = term.normalize("NFKD").replace(/[\u0300-\u036f]/g, "").toLowerCase().replace(/['’]/g, "");
  if (folded.length < 2 || STOP.has(folded)) return null;
  return stem(folded);
}

// Support words in the platform's most used languages besides English, mapped to the English
// words of the knowledge base, so a question asked in another language still finds its section.
// Matching is on folded words (no accents, lower case).
const GLOSSARY = new Map(Object.entries({
  // es / pt / it / fr
  moneda: "coin", monedas: "coin", moeda: "coin", moedas: "coin", moneta: "coin", monete: "coin", piece: "coin", pieces: "coin", jetons: "coin", jeton: "coin",
  comprar: "buy", compro: "buy", acheter: "buy", comprare: "buy", kaufen: "buy", kununua: "buy",
  pago: "payment", pagos: "payment", pagamento: "payment", paiement: "payment", pagar: "pay", payer: "pay", pagare: "pay",
  reembolso: "refund", rimborso: "refund", remboursement: "refund",
  suscripcion: "subscription", assinatura: "subscription", abbonamento: "subscription", abonnement: "subscription",
  cartera: "wallet", carteira: "wallet", portafoglio: "wallet", portefeuille: "wallet", monedero: "wallet",
  saldo: "balance", solde: "balance",
  cuenta: "account", conta: "account", compte: "account", konto: "account",
  perfil: "profile", profil: "profile", profilo: "profile",
  contrasena: "password", senha: "password", passwort: "password",
  bloquear: "block", bloquer: "block", bloccare: "block", blockieren: "block", sperren: "block",
  denunciar: "report", signaler: "report", segnalare: "report", melden: "report", reportar: "report",
  estafa: "scam", golpe: "scam", arnaque: "scam", truffa: "scam", betrug: "scam",
  amenaza: "threat", ameaca: "threat", menace: "threat", minaccia: "threat", drohung: "threat",
  pareja: "match", coincidencia: "match", correspondance: "match", abbinamento: "match",
  guino: "wink", guinos: "wink", piscadela: "wink", clin: "wink", occhiolino: "wink", zwinkern: "wink",
  error: "error", erreur: "error", errore: "error", fehler: "error", erro: "error",
  limite: "limit", limites: "limit", grenze: "limit",
  transferencia: "transfer", transfert: "transfer", trasferimento: "transfer", uberweisung: "transfer",
  zahlung: "payment", munzen: "coin", abo: "subscription", guthaben: "balance",
  // sw
  sarafu: "coin", malipo: "payment", kulipa: "pay", akaunti: "account", pochi: "wallet", salio: "balance", kuzuia: "block", ripoti: "report", utapeli: "scam", tishio: "threat", usajili: "subscription",
}));

/** The query's words plus the English words they stand for. */
export function expandQuery(query: string): string {
  const folded = query.normalize("NFKD").replace(/[\u0300-\u036f]/g, "").toLowerCase();
  const extra: string[] = [];
  for (const word of folded.split(/[^\p{L}\p{N}]+/u)) {
    const english = GLOSSARY.get(word);
    if (english) extra.push(english);
  }
  return extra.length ? `${query} ${extra.join(" ")}` : query;
}
