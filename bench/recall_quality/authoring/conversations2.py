"""A second conversational-memory set: multi-turn sessions between another person (Marek) and an assistant, and
questions whose answers lie in specific turns. Written by hand for this project, blind (issue 13): by a helper who
had not seen the criteria registered for it nor read the ranker's code, and committed before anything was run on
it; nothing is tuned on it. Same shapes as conversations.py; bench/bench_conversations.py measures both (--set).

Session ids are `m01` to `m08` (the first set uses `s01` to `s08`), so a turn id "<session>:<index>" never repeats
across the sets. Everyday topics: moving house, a garden, an evening course, a car repair, a friend's visit, a
health routine, a hobby, money. Some facts are stated once, some are updated later (a quote and the final bill, a
reading and a later one, a plan and what happened); some questions span sessions, some use none of the answering
turn's content words, some ask about order in time.

SESSIONS: (session id, date, [(speaker, text), ...]); a turn's id is "<session>:<index>" (0-based).
QUESTIONS: (question, "turn turn ..."): the turns that hold the answer (one to three).
"""

SESSIONS = [
    ("m01", "2026-06-01", [
        ("marek", "We got the keys to the new place on Friday, a terraced house on Alder Street, number 14."),
        ("assistant", "Congratulations! When are you actually moving in?"),
        ("marek", "The removal van is booked for the 20th of June. The company is called Hollis Removals, they quoted "
                  "640 pounds."),
        ("assistant", "Do you want help with a packing plan?"),
        ("marek", "Please. My partner Ines wants to do the kitchen last because she cooks every night."),
        ("assistant", "Pack the rooms you rarely use first: the loft, the spare room, the books. Keep one box of "
                      "essentials per person for the first night."),
        ("marek", "The loft is the worst, it's full of my old vinyl records, maybe three hundred of them."),
        ("assistant", "Records are heavy; use small boxes and stand them upright, never flat."),
        ("marek", "Good tip. The new house has a small garden at the back, which Ines is really excited about."),
        ("marek", "And the broadband can't be connected until the 2nd of July, so I'll be working from a cafe for a "
                  "bit."),
        ("assistant", "Check whether your phone plan allows tethering as a backup."),
    ]),
    ("m02", "2026-06-24", [
        ("marek", "We're in! The move went fine, except Hollis charged an extra 80 pounds because the van had to park "
                  "two streets away."),
        ("assistant", "Annoying, but glad it's done. How's the garden looking?"),
        ("marek", "Overgrown. There's a big old apple tree, a lot of brambles, and a patch of lawn that's mostly moss."),
        ("assistant", "Brambles come out best with the roots; moss usually means shade and poor drainage."),
        ("marek", "Ines wants raised beds for vegetables, she's thinking tomatoes, courgettes and beans."),
        ("assistant", "Raised beds need sun, about six hours a day for tomatoes. Where does the sun fall?"),
        ("marek", "The far corner by the fence gets sun all afternoon, the rest is shaded by the neighbour's sycamore."),
        ("assistant", "Then put the beds in that corner; beans cope with some shade if you run out of room."),
        ("marek", "I'll build two beds from scaffold boards this weekend, 2.4 metres by 1.2."),
        ("marek", "Oh, and our neighbour Mrs Okafor brought us a lemon drizzle cake to welcome us."),
    ]),
    ("m03", "2026-07-08", [
        ("marek", "I've enrolled in an evening course in Italian, beginner level, at the community college."),
        ("assistant", "Nice! What made you pick Italian?"),
        ("marek", "Ines's family is from Bologna and I want to talk to her grandmother without Ines translating."),
        ("assistant", "That's a lovely reason. How often are the classes?"),
        ("marek", "Tuesday and Thursday evenings, seven to nine, for twelve weeks. It cost 210 pounds."),
        ("assistant", "Practice spread between classes helps; ten minutes a day beats two hours on a Sunday."),
        ("marek", "The teacher, Signora Bruni, told us to keep a notebook of new words and read it on the bus."),
        ("assistant", "A good habit. Would flashcards on your phone help too?"),
        ("marek", "Maybe. The first test is on the 5th of August, it's an oral one, which terrifies me."),
        ("assistant", "Practise speaking aloud: record yourself describing your day and listen back."),
        ("marek", "I'll try it with the shopping list, at least I know all the vegetables now."),
    ]),
    ("m04", "2026-07-22", [
        ("marek", "The car failed its MOT yesterday. The garage says the front brake discs are worn and there's a leak "
                  "in the exhaust."),
        ("assistant", "Sorry to hear that. Did they give you a quote?"),
        ("marek", "380 pounds for the discs and pads, and another 150 for the exhaust."),
        ("assistant", "You can get a second quote; the retest is usually free if it's done within ten working days."),
        ("marek", "My friend Dariusz knows a mechanic in Leyton who might do it cheaper."),
        ("marek", "The car is a 2012 Skoda Octavia estate with 140,000 miles on it, so I'm wondering if it's worth it "
                  "at all."),
        ("assistant", "At that mileage, compare the repair with what the car is worth; Octavias often run much longer "
                      "with care."),
        ("marek", "It's worth maybe two thousand. I think I'll fix it, we need the estate for the garden centre runs."),
        ("assistant", "Makes sense. Book it before the ten days run out."),
    ]),
    ("m05", "2026-08-03", [
        ("marek", "Dariusz's mechanic did the brakes and the exhaust for 420 in total, and the car passed the retest."),
        ("assistant", "That's well under the first quote. Well done."),
        ("marek", "My old friend Kasia is visiting from Krakow next week, from the 10th to the 16th."),
        ("assistant", "Lovely! Where will she sleep?"),
        ("marek", "In the box room, but it's still full of unpacked boxes, mostly the records."),
        ("assistant", "Maybe a weekend of unpacking, or move the boxes up to the loft for now."),
        ("marek", "Kasia is vegan, so Ines is planning a dinner around a mushroom stroganoff."),
        ("marek", "She also wants to see the Tate Modern and go to a football match. She supports Wisla Krakow but "
                  "has a soft spot for Arsenal."),
        ("assistant", "Arsenal tickets sell out fast; a season ticket holder's guest ticket may be the only way."),
        ("marek", "I'll ask my colleague Tom, he has a season ticket."),
        ("assistant", "Good idea. And the Tate is free, so that's an easy day out."),
    ]),
    ("m06", "2026-08-19", [
        ("marek", "Kasia flew home on Sunday. We never got the football tickets, so we watched the match in a pub "
                  "instead."),
        ("assistant", "Still sounds fun. How did the rest of the visit go?"),
        ("marek", "Great, she loved the garden and took cuttings of Ines's rosemary back to Poland."),
        ("marek", "Also, my Italian oral test went fine: 78 percent, and Signora Bruni said my pronunciation is good."),
        ("assistant", "Brilliant! Recording yourself paid off."),
        ("marek", "Health stuff now: the doctor says my blood pressure is a bit high, 145 over 92."),
        ("assistant", "What did she suggest?"),
        ("marek", "Less salt, more walking, and a check again in three months. She didn't want to start pills yet."),
        ("assistant", "Thirty minutes of walking most days and less processed food often bring it down."),
        ("marek", "I'm going to walk to the station instead of taking the bus, that's 25 minutes each way."),
        ("marek", "And I'm cutting coffee down to two cups a day, I was at five."),
    ]),
    ("m07", "2026-09-09", [
        ("marek", "I bought a second hand bass guitar, a Fender Jazz, from a guy in Walthamstow for 450 pounds."),
        ("assistant", "Exciting! Are you taking lessons?"),
        ("marek", "Online for now, a course on an app, twenty minutes every evening after the walk."),
        ("assistant", "Start with finger exercises and simple root notes; your fingertips will hurt for a couple of "
                      "weeks."),
        ("marek", "They already do! Ines says the thumping through the floor is driving her mad."),
        ("assistant", "A small practice amp with a headphone socket solves that."),
        ("marek", "Good idea, I'll get one. The goal is to play with Tom's band at his fortieth in December."),
        ("assistant", "Which songs?"),
        ("marek", "Three covers: Another One Bites the Dust, Seven Nation Army and Come Together."),
        ("assistant", "All good beginner bass lines; Come Together is the trickiest of the three."),
        ("marek", "Also my blood pressure is already down, the machine at the pharmacy said 132 over 85 last week."),
    ]),
    ("m08", "2026-09-30", [
        ("marek", "Money talk: the move, the car and the bass have eaten most of our savings, we have about 1,900 "
                  "left."),
        ("assistant", "Do you want to set up a budget together?"),
        ("marek", "Yes. Our take-home pay is 4,300 a month between us, and the mortgage is 1,350."),
        ("assistant", "A common split is needs, wants and savings; start by listing the fixed costs."),
        ("marek", "Council tax is 160, energy about 140, and the car insurance went up to 65 a month."),
        ("assistant", "And how much would you like to save each month?"),
        ("marek", "Ines wants 500 a month towards a trip to Bologna next spring to see her grandmother."),
        ("assistant", "That's doable if the wants stay under about 900."),
        ("marek", "I'm also going to sell about a hundred of the records, a dealer in Soho offered 700 for the lot."),
        ("assistant", "Check a few prices online first; rare pressings can be worth more than a bulk offer."),
        ("marek", "True, there's a first pressing of Kind of Blue that might fetch 200 on its own."),
        ("marek", "And I cancelled the app for the bass course, Tom is teaching me for free now."),
    ]),
]

QUESTIONS = [
    # facts stated once
    ("What street is Marek's new house on?", "m01:0"),
    ("Which removal company did they book for the move?", "m01:2"),
    ("How many vinyl records did Marek have in the loft?", "m01:6"),
    ("How did the assistant say the records should be packed?", "m01:7"),
    ("When could the broadband be connected at the new house, and where would Marek work until then?", "m01:9"),
    ("Which part of the garden gets the afternoon sun?", "m02:6"),
    ("What will the raised beds be made of, and how big are they?", "m02:8"),
    ("Why is Marek learning Italian?", "m03:2"),
    ("What's the name of the Italian teacher?", "m03:6 m06:3"),
    ("When is the first Italian test and what kind of test is it?", "m03:8"),
    ("Why did the car fail its MOT?", "m04:0"),
    ("Who is visiting from Krakow, and on which dates?", "m05:2"),
    ("What was Ines going to cook for the vegan guest?", "m05:6"),
    ("Which football clubs does Kasia like?", "m05:7"),
    ("What did Kasia take back to Poland?", "m06:2"),
    ("What songs will Marek play at Tom's fortieth?", "m07:8"),
    ("Where did Marek buy the bass guitar, and how much was it?", "m07:0"),
    ("What did the assistant suggest so the bass practice doesn't bother Ines?", "m07:5"),
    ("How much do Marek and Ines take home each month, and what is the mortgage?", "m08:2"),
    ("Which record might be worth 200 pounds on its own?", "m08:10"),
    # facts updated later: the later turn, or both
    ("How much did the move cost in the end?", "m01:2 m02:0"),
    ("How much did the car repair cost in the end?", "m05:0"),
    ("What is Marek's blood pressure now?", "m07:10"),
    ("How is Marek learning the bass at the moment?", "m08:11"),
    ("Did they get football tickets for Kasia?", "m06:0"),
    ("What is Marek planning to do with his old vinyl?", "m08:8"),
    ("How did Marek do in the Italian oral test?", "m06:3"),
    ("How many cups of coffee a day does Marek drink now?", "m06:10"),
    # across sessions
    ("How did the first garage's quote compare with what Marek finally paid?", "m04:2 m05:0"),
    ("How has Marek's blood pressure changed since the doctor's visit?", "m06:5 m07:10"),
    ("What does Tom have to do with Marek's bass playing?", "m07:6 m08:11"),
    ("Who found the cheaper mechanic, and did it work out?", "m04:4 m05:0"),
    ("Where have the records been kept since before the move?", "m01:6 m05:4"),
    ("Why does the trip to Bologna matter to Ines?", "m03:2 m08:6"),
    # in other words than the turn: no content word shared with it
    ("What did the physician advise about his heart readings?", "m06:7"),
    ("How will he get to the train each morning from now on?", "m06:9"),
    ("Why is his partner annoyed by the new instrument?", "m07:4"),
    ("What is growing wild behind the house?", "m02:2"),
    ("What was the fee for the language lessons?", "m03:4"),
    ("How old is the vehicle, and how far has it gone?", "m04:5"),
    ("Who came round with something baked when they arrived?", "m02:9"),
    ("What remains of their reserve after this year's big spending?", "m08:0"),
    # order in time
    ("What did Marek decide after the garage told him what was wrong with the car?", "m04:7"),
    ("What did the doctor tell him to do after the blood pressure check, and what did he change?",
     "m06:7 m06:9 m06:10"),
    ("Before Kasia came, where were the records kept?", "m05:4"),
    ("Which came first, the failed MOT or signing up for the Italian course?", "m03:0 m04:0"),
    ("What was Marek's blood pressure when it was first measured?", "m06:5"),
]
