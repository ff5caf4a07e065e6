/**
 * When the support agent hands the member to a person, whatever the model thinks: they asked for
 * one, or their message carries a safety risk (threats, self-harm, minors, extortion). Word lists
 * cover English and the most used languages of the platform; a false alarm costs a ticket, a
 * missed one costs far more, so they lean wide.
 */
export type EscalationReason = "asked_for_person" | "threat" | "self_harm" | "minor" | "extortion" | "nothing_found" | "model";

const PERSON = [
  /\b(human|real person|live (agent|person|chat)|(talk|speak|chat) (to|with) (a |an |the |your )?(human|person|agent|someone|somebody|representative|operator|staff|support|team)|(want|need) (an? |to talk to an? )?(agent|person|human|representative|operator)|call me|phone me|customer service|supervisor|manager)\b/i,
  /\b(persona real|humano|hablar con (alguien|una persona|un agente)|pessoa real|atendente|falar com (alguem|uma pessoa|um atendente)|humain|conseiller|parler a (quelqu'?un|une personne|un conseiller)|mensch|mitarbeiter|berater|operatore|parlare con (qualcuno|una persona)|mtu halisi|binadamu|wakala)\b/i,
];
const THREAT = [
  /\b(threat\w*|threaten\w*|going to (kill|hurt|find) (me|you)|kill (me|you)|hurt (me|you)|stalk\w*|follow\w* me home|violent|violence|assault\w*|rape\w*|weapon|gun|knife)\b/i,
  /\b(amenaza\w*|amenazo|ameaca\w*|menace\w*|minaccia\w*|drohung\w*|bedroht|tishio|kutishia)\b/i,
];
const SELF_HARM = [
  /\b(suicid\w*|kill myself|killing myself|end my life|want to die|wanna die|self[- ]?harm\w*|hurt myself|hurting myself|cut myself|no reason to live|overdose)\b/i,
  /\b(suicidarme|quiero morir|matarme|me suicider|envie de mourir|me tuer|suicidio|voglio morire|selbstmord|umbringen|kujiua)\b/i,
];
const MINOR = [
  /\b(minors?(?! (issue|problem|bug|change|update|thing|error|glitch|detail|question|fix))|underage|under[- ]age|under 18|child|children|kid|kids|teen|teens|teenager|schoolgirl|schoolboy|(1[0-7]|[1-9])[- ]?(years?|yrs?)[- ]?old|(1[0-7]|[1-9]) ?yo)\b/i,
  /\b(menor de edad|menores de edad|nino|nina|menor de idade|mineur|mineure|enfant|minorenne|minderjahrig|mtoto|watoto)\b/i,
];
const EXTORTION = [
  /\b(extort\w*|blackmail\w*|sextort\w*|ransom|leak (my|the|our) (photos|pictures|pics|images|videos?|nudes)|share my (nudes|photos|pictures)|pay (him|her|them) or|threatening to (post|share|send|leak))\b/i,
  /\b(extorsion|chantaje|extorsao|chantagem|chantage|ricatto|estorsione|erpressung|erpress\w*|kunitisha kuweka)\b/i,
];

const fold = (text: string) => text.normalize("NFKD").replace(/[\u0300-\u036f]/g, "").toLowerCase();

/** The reasons in the member's own words that require a person, in a stable order. */
export function escalationReasons(text: string): EscalationReason[] {
  const t = fold(text);
  const reasons: EscalationReason[] = [];
  if (PERSON.some((r) => r.test(t))) reasons.push("asked_for_person");
  if (THREAT.some((r) => r.test(t))) reasons.push("threat");
  if (SELF_HARM.some((r) => r.test(t))) reasons.push("self_harm");
  if (MINOR.some((r) => r.test(t))) reasons.push("minor");
  if (EXTORTION.some((r) => r.test(t))) reasons.push("extortion");
  return reasons;
}

export const SAFETY_REASONS: readonly EscalationReason[] = ["threat", "self_harm", "minor", "extortion"];
