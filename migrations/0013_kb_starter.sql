-- The starter support knowledge base, so a fresh install answers billing, coin, account, matching,
-- safety and technical questions. Admins replace it with PUT /api/v1/kb (a new version; this one stays).
-- Only inserted into an empty table, so applying it over an existing knowledge base changes nothing.
INSERT INTO "kb_versions" ("content", "created_by")
SELECT $kb$# Billing

## Coins and what they cost
Coins are the platform's currency. One coin is worth one US cent, so 500 coins cost five US dollars. Payments in other currencies are converted at the rate shown at checkout. Coins pay for subscriptions and can be sent to other members. Coins are not refundable as cash and do not expire.

## Buying coins
Open Wallet and choose Add coins. You can pay by card, by card collection in supported countries, with cryptocurrency (BTC, ETH, LTC, BCH, USDC or USDT) or by mobile money. The smallest card payment is 51 cents. Coins arrive in your wallet as soon as the payment provider confirms the payment; card and mobile-money payments usually confirm within a minute, crypto payments after the network confirms the transaction.

## A payment is still pending
A payment stays pending until the provider confirms it to us. Returning to the app from the payment page does not complete it by itself. If a card or mobile-money payment is still pending after 30 minutes, or a crypto payment after two hours, contact support with the payment id shown on the payment screen (it starts with a provider reference or a transaction id). Never pay the same checkout twice: a second payment is not merged with the first.

## Subscription plans
There are three plans. Standard is free. Premium costs 500 coins and Enterprise costs 2,000 coins per 30 days. Paid plans remove the daily wink limit and raise your request limits. You subscribe from Wallet, Plans; the price is paid from your coin balance at once, so add coins first if your balance is too low.

## Renewing or changing a plan
Buying the plan you already hold adds 30 days after the end of your current period. Buying the other paid plan starts the new plan immediately and replaces the rest of the current period; the unused time is not refunded or prorated. Plans do not renew on their own: when a period ends without a new purchase, your account returns to Standard.

## Refunds and charges you do not recognise
Coins spent on a subscription are not refunded. If you see a charge you do not recognise, or you were charged but received no coins, contact support with the payment id and the date; do not open a dispute with your bank before we have answered, because a dispute freezes the payment while it is reviewed.

# Coins and wallet

## Checking your balance and history
Wallet shows your balance, your plan tier and every movement of coins: purchases, transfers sent and received, awards and subscription payments, newest first. Your balance is always the sum of this history.

## Sending coins to another member
Open the member's profile or Wallet, choose Send coins, enter a whole number of coins and an optional note of up to 280 characters. A transfer happens at once and cannot be reversed, so check the recipient first. You cannot send coins to yourself or send more than your balance. If your app retries a transfer after a network error, the transfer still happens only once.

## Coins sent by mistake
Transfers are final and support cannot take coins back from another member. Ask the recipient to send them back. If you believe the transfer was the result of a scam or pressure, report the member (Safety, Report) and contact support.

## Coin awards and the leaderboard
Coins can be awarded by the platform for promotions and rewards; awards appear in your history with their reason. The leaderboard ranks members by coin balance and refreshes every 30 seconds.

# Account

## Creating your profile
After signing in, create your profile with a display name, birth date, gender and who you are interested in. You must be at least 18 years old. A bio is 10 to 500 characters; you can add up to 10 interests and up to 6 photos. Your email, birth date and exact location are never shown to other members: they see your age, your city and a distance rounded to 5 km.

## Editing your profile and visibility
You can change any profile field at any time; fields you do not change keep their value. Set your profile to hidden to leave discovery: hidden profiles are not shown to anyone, but your matches and messages stay.

## Signing in and sign-in problems
Sign-in uses your platform account through a secure login page. If you forgot your password, choose Forgot password on the login page and follow the link sent to your email. If you are signed out repeatedly, update the app and check that your device clock is set automatically, because an incorrect clock makes sign-in tokens look expired. If you cannot sign in at all, contact support from the login page with the email address of your account.

## API keys for administrators
Administrators can create API keys in the admin panel under Settings, API Keys. A key is shown only once. Rotate keys every 90 days: create a new key, update your clients, check them, then delete the old key. Keys older than 90 days keep working but responses carry a warning.

## Deleting your account
Contact support from your account to delete it. Deleting removes your profile from discovery and ends your matches. Coins left in your wallet are lost when the account is deleted.

# Matching

## How discovery works
Discovery shows people whose preferences fit yours both ways: each person's gender wishes, age range and distance. Profiles are ranked by how well you fit each other's interests, distance and age wishes, with recently active and new members lifted. You never see yourself, people you already swiped, people you were matched with, people you blocked or who blocked you, or hidden profiles. If discovery is empty, widen your age range or distance, or add interests.

## Likes, passes and matches
Swipe right to like and left to pass. When two people like each other, a match is created and both are notified. Each person can be swiped only once; passes are final in discovery.

## Winks
A wink is a like with an optional short message that shows up in the other person's received winks. The recipient can accept (which creates a match) or decline. On the free Standard plan you can send 10 winks per UTC day; the limit resets at midnight UTC. Premium and Enterprise have no daily wink limit. You can have only one pending wink to the same person.

## Unmatching
You can remove a match at any time from the match list. After that neither of you sees the match, and you will not be shown to each other in discovery again.

## Why am I not getting matches
Complete your profile with a bio, several photos and interests, keep your preferences realistic, and be active: recently active profiles are shown more. Each profile is shown a limited number of times per day, so new people keep appearing over time.

# Safety

## Blocking someone
Block a person from their profile or the match list. A block hides both of you from each other everywhere: discovery, profiles, swipes, winks, matches and notifications. The other person is not told. You can lift a block from Settings, Blocked members.

## Reporting someone
Report a person from their profile with a reason: spam, harassment, fake profile, underage, inappropriate content or other, and add details if you can. A report also blocks the person at once. Moderators review every report; you are not told the outcome, but action is taken where rules were broken.

## Scams and requests for money
Never send money, coins, gift cards or crypto to someone you have not met, and never share passwords, verification codes or payment details. Be wary of anyone who asks to move the conversation off the platform quickly, tells you an emergency story, or offers an investment. Report such profiles. The support team never asks for your password.

## Meeting in person
Meet in a public place, tell a friend where you are going and arrange your own transport. Leave if you feel uncomfortable. If you are in danger, call your local emergency number first, then report the member.

## Threats, extortion and underage users
If someone threatens you, blackmails you with images or information, or appears to be under 18, report them immediately with the reason that fits and contact support: these reports are handled by a person with priority. Do not pay an extortion demand. If you are thinking about harming yourself, please contact a local crisis line or emergency services now.

# Technical

## Request limits
To keep the service fast for everyone, requests are limited per member and plan. Standard allows 1,000 requests per hour with bursts of 100 per minute, Premium 5,000 per hour and Enterprise 20,000 per hour. AI features have their own limits: 100 per hour on Standard, 500 on Premium and 2,000 on Enterprise. When a limit is reached the app shows a message with the time to wait; try again after it.

## The app is slow or shows an error
Check your connection, update the app to the latest version and restart it. If an error shows a request id, include it when you contact support: it lets us find exactly what happened.

## Notifications and live updates
New matches and winks arrive as live events while the app is open; after reconnecting, the app catches up on anything it missed. If notifications do not arrive, check that notifications are allowed for the app in your device settings.

## Languages
The app and the AI assistant support English, Spanish, French, Swahili, Arabic, Chinese, Hindi, Portuguese, Russian, Japanese, Korean, German, Italian and more. Choose your language in Settings; support answers in the language you write in when it is supported.

## Contacting a person in support
Ask the support assistant for a person at any time, or open a ticket from Help. Include your account email, what happened, when, and any payment id or request id. Urgent safety reports are handled first.
$kb$, NULL
WHERE NOT EXISTS (SELECT 1 FROM "kb_versions");
