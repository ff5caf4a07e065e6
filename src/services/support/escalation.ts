/**
 * When the support agent hands the member to a person, whatever the model thinks: they asked for
 * one, or their message carries a safety risk (threats, self-harm, minors, extortion). Word lists
 * cover the thirteen languages the spec shows first (en, es, fr, sw, ar, zh, hi, pt, ru, ja, ko,
 * de, it); a false alarm costs a ticket, a missed one costs far more, so they lean wide.
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

// Latin accents, and the Arabic vowel and hamza marks (so أ, إ and ا read alike).
const fold = (text: string) =>
  text
    .normalize("NFKD")
    .replace(/[\u0300-\u036f\u064b-\u065f\u0670]/g, "")
    .toLowerCase();

/**
 * Arabic, Chinese, Hindi, Russian, Japanese and Korean, matched as substrings: \b knows only
 * Latin letters, and CJK puts no space between words. Stems where the language inflects
 * (угрож…, 죽고 싶…). Words that are also everyday parts of other words are left out (Korean
 * 아이 "child" is in 아이디 "ID").
 */
const OTHER_SCRIPTS: Record<Exclude<EscalationReason, "nothing_found" | "model">, string[]> = {
  asked_for_person: [
    "живой человек", "поговорить с человеком", "с оператором", "с сотрудником",
    "شخص حقيقي", "التحدث مع شخص", "موظف خدمة العملاء",
    "人工客服", "转人工", "轉人工", "真人客服",
    "オペレーター", "担当者と話", "人間と話",
    "상담원", "사람과 이야기", "직원과 통화",
    "असली इंसान", "किसी इंसान से बात", "एजेंट से बात",
  ],
  threat: [
    "угрож", "убью тебя", "убьет меня", "убить меня", "изнасил", "преследует меня",
    "تهديد", "يهددني", "سأقتلك", "يقتلني", "اغتصاب", "يلاحقني",
    "威胁", "威脅", "杀了你", "殺了你", "杀了我", "殺了我", "强奸", "強姦", "跟踪我", "跟蹤我",
    "脅迫", "脅され", "殺す", "殺される", "ストーカー", "つきまと", "レイプ",
    "협박", "죽이겠", "죽일 거", "스토킹", "성폭행", "강간",
    "धमकी", "मार डाल", "जान से मार", "बलात्कार", "पीछा कर",
  ],
  self_harm: [
    "суицид", "самоубийств", "покончить с собой", "убить себя", "хочу умереть", "не хочу жить", "порезать себя",
    "انتحار", "اقتل نفسي", "اريد ان اموت", "ايذاء نفسي",
    "自杀", "自殺", "想死", "不想活", "自残", "自殘", "结束生命", "結束生命", "割腕",
    "死にたい", "消えたい", "自傷", "リストカット",
    "자살", "죽고 싶", "죽고싶", "자해", "살고 싶지 않",
    "आत्महत्या", "खुद को मार", "मरना चाहत", "जीना नहीं चाहत",
  ],
  minor: [
    "несовершеннолетн", "ребенок", "школьни", "подросток",
    "قاصر", "طفل", "اطفال", "تحت السن", "مراهق",
    "未成年", "儿童", "兒童", "小学生", "初中生", "中学生",
    "子供", "子ども", "高校生",
    "미성년", "어린이", "초등학생", "중학생", "고등학생", "청소년",
    "नाबालिग", "बच्चा", "बच्ची", "बच्चे",
  ],
  extortion: [
    "шантаж", "вымога", "слить фото", "выложит мои фото",
    "ابتزاز", "يبتزني", "نشر صوري",
    "勒索", "敲诈", "敲詐", "裸照", "艳照", "艷照",
    "恐喝", "ゆすり", "リベンジポルノ", "裸の写真",
    "갈취", "몸캠", "사진 유포", "영상 유포",
    "ब्लैकमेल", "जबरन वसूली", "फोटो वायरल",
  ],
};
const OTHER_SCRIPTS_FOLDED = Object.fromEntries(Object.entries(OTHER_SCRIPTS).map(([reason, words]) => [reason, words.map(fold)])) as Record<
  keyof typeof OTHER_SCRIPTS,
  string[]
>;

/** The reasons in the member's own words that require a person, in a stable order. */
export function escalationReasons(text: string): EscalationReason[] {
  const t = fold(text);
  const said = (reason: keyof typeof OTHER_SCRIPTS, latin: RegExp[]) => latin.some((r) => r.test(t)) || OTHER_SCRIPTS_FOLDED[reason].some((w) => t.includes(w));
  const reasons: EscalationReason[] = [];
  if (said("asked_for_person", PERSON)) reasons.push("asked_for_person");
  if (said("threat", THREAT)) reasons.push("threat");
  if (said("self_harm", SELF_HARM)) reasons.push("self_harm");
  if (said("minor", MINOR)) reasons.push("minor");
  if (said("extortion", EXTORTION)) reasons.push("extortion");
  return reasons;
}

export const SAFETY_REASONS: readonly EscalationReason[] = ["threat", "self_harm", "minor", "extortion"];
