/**
 * The fixed sentences of the deterministic answer, in the languages the spec shows first. The
 * knowledge-base text itself is quoted as written (the platform keeps one edition of it); these
 * sentences tell the member, in their language, what they are reading and what happens next.
 */
interface Phrases {
  found: string;
  notFound: string;
  handover: string;
  crisis: string;
}

const PHRASES: Record<string, Phrases> = {
  en: {
    found: "Here is what our help centre says:",
    notFound: "I could not find an answer to that in our help centre.",
    handover: "I am passing this to our support team; a person will follow up with you.",
    crisis: "If you are in danger or thinking about harming yourself, please contact your local emergency number or a crisis line now.",
  },
  es: {
    found: "Esto es lo que dice nuestro centro de ayuda (en inglés):",
    notFound: "No encontré una respuesta a eso en nuestro centro de ayuda.",
    handover: "Paso tu consulta a nuestro equipo de soporte; una persona se pondrá en contacto contigo.",
    crisis: "Si estás en peligro o piensas en hacerte daño, llama ahora al número de emergencias local o a una línea de crisis.",
  },
  fr: {
    found: "Voici ce qu'indique notre centre d'aide (en anglais) :",
    notFound: "Je n'ai pas trouvé de réponse à cela dans notre centre d'aide.",
    handover: "Je transmets votre demande à notre équipe d'assistance ; une personne vous recontactera.",
    crisis: "Si vous êtes en danger ou pensez à vous faire du mal, appelez dès maintenant le numéro d'urgence local ou une ligne d'écoute.",
  },
  pt: {
    found: "Isto é o que diz a nossa central de ajuda (em inglês):",
    notFound: "Não encontrei uma resposta para isso na nossa central de ajuda.",
    handover: "Estou encaminhando isto para a nossa equipe de suporte; uma pessoa entrará em contato.",
    crisis: "Se você está em perigo ou pensando em se machucar, ligue agora para o número de emergência local ou para uma linha de apoio.",
  },
  de: {
    found: "Das steht in unserem Hilfe-Center (auf Englisch):",
    notFound: "Dazu habe ich in unserem Hilfe-Center keine Antwort gefunden.",
    handover: "Ich gebe das an unser Support-Team weiter; ein Mensch meldet sich bei dir.",
    crisis: "Wenn du in Gefahr bist oder daran denkst, dir etwas anzutun, wende dich jetzt an den örtlichen Notruf oder eine Krisenhotline.",
  },
  it: {
    found: "Ecco cosa dice il nostro centro assistenza (in inglese):",
    notFound: "Non ho trovato una risposta nel nostro centro assistenza.",
    handover: "Inoltro la richiesta al nostro team di supporto; una persona ti ricontatterà.",
    crisis: "Se sei in pericolo o pensi di farti del male, contatta subito il numero di emergenza locale o una linea di crisi.",
  },
  sw: {
    found: "Hiki ndicho kituo chetu cha msaada kinasema (kwa Kiingereza):",
    notFound: "Sikupata jibu la swali hilo katika kituo chetu cha msaada.",
    handover: "Ninapeleka hili kwa timu yetu ya msaada; mtu atawasiliana nawe.",
    crisis: "Ikiwa uko hatarini au unafikiria kujidhuru, tafadhali piga simu ya dharura ya eneo lako sasa.",
  },
  ar: {
    found: "هذا ما يقوله مركز المساعدة لدينا (بالإنجليزية):",
    notFound: "لم أجد إجابة عن ذلك في مركز المساعدة.",
    handover: "سأحوّل طلبك إلى فريق الدعم؛ وسيتواصل معك أحد الموظفين.",
    crisis: "إذا كنت في خطر أو تفكر في إيذاء نفسك، فاتصل الآن برقم الطوارئ المحلي أو بخط المساعدة في الأزمات.",
  },
  zh: {
    found: "以下是帮助中心的说明（英文）：",
    notFound: "我在帮助中心没有找到相关答案。",
    handover: "我会把这个问题转给客服团队，工作人员会联系你。",
    crisis: "如果你处于危险之中或有伤害自己的想法，请立即拨打当地紧急电话或危机热线。",
  },
  hi: {
    found: "हमारे सहायता केंद्र में यह लिखा है (अंग्रेज़ी में):",
    notFound: "मुझे हमारे सहायता केंद्र में इसका उत्तर नहीं मिला।",
    handover: "मैं इसे हमारी सहायता टीम को भेज रहा हूँ; कोई व्यक्ति आपसे संपर्क करेगा।",
    crisis: "यदि आप खतरे में हैं या खुद को नुकसान पहुँचाने के बारे में सोच रहे हैं, तो अभी अपने स्थानीय आपातकालीन नंबर या संकट हेल्पलाइन से संपर्क करें।",
  },
  ru: {
    found: "Вот что говорится в нашем справочном центре (на английском):",
    notFound: "Я не нашёл ответа на этот вопрос в справочном центре.",
    handover: "Я передаю обращение в службу поддержки; с вами свяжется сотрудник.",
    crisis: "Если вы в опасности или думаете причинить себе вред, немедленно позвоните в местную экстренную службу или на линию помощи.",
  },
  ja: {
    found: "ヘルプセンターの説明は次のとおりです（英語）：",
    notFound: "ヘルプセンターでその答えは見つかりませんでした。",
    handover: "サポートチームに引き継ぎます。担当者からご連絡します。",
    crisis: "危険な状況にある場合や自分を傷つけたいと考えている場合は、今すぐ地域の緊急番号または相談窓口に連絡してください。",
  },
  ko: {
    found: "고객센터 안내 내용입니다(영어):",
    notFound: "고객센터에서 해당 답변을 찾지 못했습니다.",
    handover: "지원팀에 전달하겠습니다. 담당자가 연락드릴 것입니다.",
    crisis: "위험에 처해 있거나 스스로를 해칠 생각이 든다면 지금 바로 지역 긴급 번호나 위기 상담 전화에 연락하세요.",
  },
};

/** The member's language where it is listed, English otherwise. */
export function phrasesFor(language: string): Phrases {
  return PHRASES[language] ?? PHRASES.en!;
}
