import type { ProfileSummary } from "./context-cache";

/** The user's own profile as plain lines for a data block (no exact birth date or position). */
export function profileText(p: ProfileSummary | null): string {
  if (!p) return "(no profile yet)";
  const lines = [
    `name: ${p.displayName}`,
    `age: ${p.age}`,
    `gender: ${p.gender}; wants to meet: ${p.interestedIn.join(", ")} aged ${p.ageMin}-${p.ageMax}`,
    p.tagline ? `tagline: ${p.tagline}` : undefined,
    p.bio ? `bio: ${p.bio}` : undefined,
    p.interests.length ? `interests: ${p.interests.join(", ")}` : undefined,
    p.languages.length ? `languages: ${p.languages.join(", ")}` : undefined,
    p.city || p.country ? `location: ${[p.city, p.country].filter(Boolean).join(", ")}` : undefined,
  ];
  return lines.filter(Boolean).join("\n");
}
