import type { LanguageCode } from "../ai/languages";

type Template = (position: number, minutes: number) => string;

/**
 * The queue's status message, written by hand for the languages we can write well; the numbers
 * follow a label ("Position: 3") so no language needs plural forms. Every other supported language
 * gets English, and the answer says so (`statusMessageLanguage`).
 */
const TEMPLATES: Partial<Record<LanguageCode, Template>> = {
  en: (p, m) => `Your video support request is in the queue. Position: ${p}. Estimated wait: about ${m} min.`,
  es: (p, m) => `Tu solicitud de soporte por video está en la cola. Posición: ${p}. Espera estimada: unos ${m} min.`,
  fr: (p, m) => `Votre demande d'assistance vidéo est dans la file d'attente. Position : ${p}. Attente estimée : environ ${m} min.`,
  de: (p, m) => `Ihre Anfrage für Video-Support ist in der Warteschlange. Position: ${p}. Geschätzte Wartezeit: etwa ${m} Min.`,
  it: (p, m) => `La tua richiesta di assistenza video è in coda. Posizione: ${p}. Attesa stimata: circa ${m} min.`,
  pt: (p, m) => `Seu pedido de suporte por vídeo está na fila. Posição: ${p}. Espera estimada: cerca de ${m} min.`,
  nl: (p, m) => `Je aanvraag voor videosupport staat in de wachtrij. Positie: ${p}. Geschatte wachttijd: ongeveer ${m} min.`,
  sv: (p, m) => `Din begäran om videosupport står i kö. Plats: ${p}. Beräknad väntetid: cirka ${m} min.`,
  pl: (p, m) => `Twoje zgłoszenie wsparcia wideo jest w kolejce. Pozycja: ${p}. Szacowany czas oczekiwania: około ${m} min.`,
  ru: (p, m) => `Ваш запрос на видеоподдержку поставлен в очередь. Место в очереди: ${p}. Ожидаемое время ожидания: около ${m} мин.`,
  uk: (p, m) => `Ваш запит на відеопідтримку в черзі. Місце в черзі: ${p}. Орієнтовний час очікування: близько ${m} хв.`,
  tr: (p, m) => `Görüntülü destek talebiniz sırada. Sıranız: ${p}. Tahmini bekleme süresi: yaklaşık ${m} dk.`,
  id: (p, m) => `Permintaan dukungan video Anda sudah masuk antrean. Posisi: ${p}. Perkiraan waktu tunggu: sekitar ${m} menit.`,
  sw: (p, m) => `Ombi lako la msaada kwa video liko kwenye foleni. Nafasi: ${p}. Muda wa kusubiri unaokadiriwa: takriban dakika ${m}.`,
  ar: (p, m) => `طلبك للدعم عبر الفيديو في قائمة الانتظار. ترتيبك: ${p}. وقت الانتظار المتوقع: حوالي ${m} دقيقة.`,
  hi: (p, m) => `आपका वीडियो सहायता अनुरोध कतार में है। स्थान: ${p}। अनुमानित प्रतीक्षा: लगभग ${m} मिनट।`,
  zh: (p, m) => `您的视频客服请求已进入队列。排队位置：${p}。预计等待时间：约 ${m} 分钟。`,
  ja: (p, m) => `ビデオサポートのリクエストを受け付けました。順番：${p}番目。予想待ち時間：約${m}分。`,
  ko: (p, m) => `영상 지원 요청이 대기열에 등록되었습니다. 대기 순서: ${p}. 예상 대기 시간: 약 ${m}분.`,
};

export const TRANSLATED_LANGUAGES = Object.keys(TEMPLATES) as LanguageCode[];

export function statusMessage(language: LanguageCode, position: number, minutes: number): { text: string; language: LanguageCode } {
  const own = TEMPLATES[language];
  if (own) return { text: own(position, minutes), language };
  return { text: (TEMPLATES.en as Template)(position, minutes), language: "en" };
}
