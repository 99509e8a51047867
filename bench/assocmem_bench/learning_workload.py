"""The recurring-problem workload of the learning benchmark, generated from a seed.

Each problem type has a few *problem words* (what people say when it recurs) and a
disjoint set of *fixing words* (what the one note that fixes it says). Its fixing
note is written only from its fixing words and template words every kind of note
shares; its symptom notes use its problem words and fix nothing; distractor notes
fill the rest from words no type owns, in the same templates. Questions are
templates of filler common to all types, filled with a type's problem words.

Problem words are drawn only from words of `SYNONYMS`, a table of an English
synonym or short paraphrase for each: every type also has *synonym wordings*,
questions that say its symptoms in those other words, in templates of their own.
A synonym wording shares no stem with any training question of any type nor with
any fixing note, so only what a reader learned about the meaning of the questions
it was taught (not their words) can lead it from a synonym wording to the fix.

Invariant: no question shares a word (or a Snowball stem) with its type's fixing
note, so words alone cannot find the fix, and what a reader learns from outcomes
is the only path from a question to it. The same seed gives the same notes and
questions.
"""

from __future__ import annotations

import functools
import hashlib
import random
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

PROBLEM_WORDS = 8
FIXING_WORDS = 6
SYMPTOM_NOTES = 3  # per type
TRAINING = 5  # wordings per type, and as many held out
HELD_OUT = 5
HELD_OUT_NEW_TEMPLATES = 3  # of the held-out wordings, in templates no training wording uses
HELD_OUT_ONLY_TEMPLATES = 4  # templates kept out of training altogether
SYNONYM_WORDINGS = 3  # per type, as many as its held-out wordings in new templates
MIN_NOISE_WORDS = 60  # distractors need a vocabulary of their own

# Ordinary English nouns (a few verbs and adjectives) of technical and everyday
# flavour; no two share a Snowball stem, and none is a stop word.
WORDS = tuple(
    """
    keyring resolver thermostat ledger anchor antenna apron archive armchair attic avocado axle
    backpack badge bagel balcony ballot bamboo bandage banner barrel basement basket battery beacon
    beaker bellows bench bicycle binder biscuit blanket blender blossom blueprint boiler bolt
    bookmark boulder bracket brakeline breadbox brick bridge broom bucket buckle buffer bulletin
    bumper bundle burner button cabinet cable cactus calendar camera campfire candle canoe canvas
    capsule caravan carbon cardigan carpet carriage cartridge cashew casket catalog cauldron ceiling
    cellar chalk chandelier channel chapel charcoal charger chassis cheddar chimney chisel chorus
    cider cinnamon circuit clamp clarinet clipboard cloak clockwork closet cobweb cockpit coconut
    coffer compass compost compressor concrete condenser console cookie copper coral cork corridor
    cottage cotton couch counter courier crate crayon crescent cricket crowbar cruiser crystal
    cupboard curtain cushion cylinder daisy dashboard debugger decoder denim depot desk detector
    diamond diaper dinghy diploma dipstick dishwasher diver docket dolphin domino doorbell doormat
    drawer dresser drill driveway drumstick duffel dumpling dungeon dynamo easel eclipse elbow
    elevator emerald engine envelope eraser escalator espresso exhaust fabric falcon fan faucet
    feather fence ferry fiddle filament filter firewall flannel flashlight flask flute folder
    footbridge forklift fountain freezer fridge funnel furnace gadget galaxy garage gargoyle garland
    garnet gasket gazebo gearbox generator geyser ginger glacier gondola gravel greenhouse griddle
    grinder guitar gutter hallway hammock hamper handbrake harbor harmonica harness harpoon hatchet
    headlamp hearth hedge helmet hinge hockey holster honey hopper horizon hose hourglass hydrant
    icicle igloo inkwell invoice iron jacket jasmine javelin jigsaw journal jukebox kayak kettle
    keyboard keystone kiln kiosk kitten knapsack knob lab ladder ladle lagoon lantern laptop lasso
    latch lattice lavender lawnmower leash lemon lens lettuce lever library lighthouse limestone
    lobster locker locket lodge loom lumber magnet mailbox mallet mango mantel marble marker
    mattress meadow megaphone melon meteor microphone microwave mileage mirror mitten modem monitor
    mortar mosaic motor mountain muffin mural mushroom napkin necklace needle nest netbook nickel
    notebook nozzle nutmeg oar oatmeal odometer olive orchard orchid oven paddle padlock pagoda
    pallet pancake panel pantry paperclip parachute parcel parka parrot passport pastry patio
    pebble pedal pelican pendulum pepper periscope pewter piano pickle pigeon pillow pinwheel
    pipeline pistachio piston pitcher plank planter plaster plateau platter pliers plum plunger
    pocket podium pollen pomegranate poncho porch portal postcard pottery pouch powder printer
    propeller pulley pump pumpkin puppet quarry quartz quilt quiver rabbit racket radar radiator
    raft railing raincoat raisin ramp razor receipt recorder reel referee reservoir ribbon rickshaw
    rifle rocket roof rooster router rudder rug saddle saffron sailboat salmon sandal sandbox
    satchel saucepan saucer sawdust saxophone scaffold scalpel scanner scarf scooter scraper
    screwdriver scroll sculpture seashell sensor server shampoo shelf shovel shutter sidewalk
    signpost silo skateboard skillet sled sledgehammer slipper smokestack snorkel soapbox socket
    sofa solder spatula speaker spindle spinach sponge spool spreadsheet sprinkler sprocket squash
    stapler starfish statue steeple stencil stethoscope stopwatch stove strainer streetlamp
    submarine subway suitcase sundial sunflower surfboard swamp sweater syringe tablet tadpole
    tambourine tangerine tapestry teapot telescope tent terminal terrace thimble throttle thunder
    ticket timber toaster toboggan tractor trailer trampoline treadmill trellis tricycle trolley
    trombone trophy trowel trumpet tugboat tulip tunnel turbine turnip turret tweezers typewriter
    umbrella utensil vacuum valve vase vault velvet vending veranda vest viaduct villa vinegar
    violin volcano waffle wagon walnut wardrobe warehouse washer watchtower waterfall weathervane
    wheelbarrow whistle wicket widget windmill windshield wingnut wiper wrench xylophone yacht
    yogurt zipper acorn almanac amplifier anvil aquarium arcade asphalt atlas awning bakery
    bandwidth barometer bassoon baton bazaar bedrock beehive birdhouse blacksmith blizzard bobbin
    bonfire bouquet brewery brooch buggy bulldozer bunker butler cafeteria calculator canopy
    carousel cashier castle cathedral checkpoint cheetah chipmunk cinema citadel clinic clover
    cobbler coliseum comet conveyor cornfield coyote crane cufflink cutlery dagger dairy dartboard
    deckchair dentist derrick dewdrop dial dormitory drainpipe dragonfly drumkit dustpan earmuff
    eggplant embassy fairground ferret fiesta fishbowl flagpole flamingo floodgate foghorn fossil
    foxglove freight frigate gallery gatehouse glider goblet gopher granary grapefruit grasshopper
    gravy gumball hairbrush hamster handrail hayloft hazelnut headboard hedgehog heron highway
    hilltop hotplate housekeeper hovercraft iceberg infirmary inkjet jellyfish jetty kennel kernel
    keypad kingfisher lamppost landfill laundry lemonade lifeboat lighter limousine lipstick
    lollipop mansion marathon marina marmalade mascot meatball merchant metronome milkshake minnow
    moat molasses monastery moped mosquito motel mudflat mustard nightstand nutcracker observatory
    octopus omelet orangery ostrich otter outpost overpass paintbrush palace pamphlet panther
    paperweight parsley pavilion peacock peanut pharmacy pheasant pickaxe pinecone pitchfork
    planetarium plywood porcupine porridge pretzel pudding puffin quicksand raccoon rafter
    rattlesnake reindeer rhubarb riverbank rosemary sandpaper sardine sawmill schoolyard scarecrow
    seagull seesaw shipyard shoelace shortbread showroom skylight skyscraper slingshot snowplow
    soybean spaceship sparrow spearmint stagecoach stairwell stadium stockpot stonewall sunroof
    swordfish tabletop taxicab teacup thermos thistle tollbooth tomato toolbox toothbrush tortoise
    townhall treehouse tripod truffle tuxedo vineyard walkway walrus warthog washbasin watermelon
    wetland whirlpool wigwam windowsill woodpecker workbench wristwatch yardstick zucchini
    """.split()
)

# A synonym or short paraphrase of each word that may be a problem word, as people
# would say it otherwise. Each is written in words outside `WORDS` and every template,
# so that it shares no stem with a question or note the workload can write; an entry
# was kept when, of all the table's synonyms, it is among the 10 that all-MiniLM-L6-v2
# puts nearest its word.
SYNONYMS = dict(
    tuple(part.strip() for part in entry.split("="))
    for entry in """
    keyring = key holder; thermostat = temperature regulator; ledger = account book;
    antenna = aerial; archive = document storage; armchair = easy chair; attic = loft;
    avocado = alligator pear; axle = wheel shaft; ballot = voting slip; bandage = wound dressing;
    banner = pennant; basement = underground level; battery = power cell; beacon = signal light;
    bench = long seat; bicycle = bike; biscuit = cracker; blanket = bed cover;
    blender = food mixer; blossom = flower bloom; boiler = hot water tank; boulder = large rock;
    brakeline = brake tubing; breadbox = bread bin; brick = clay block; bridge = river crossing;
    broom = sweeping brush; buckle = belt clasp; bulletin = announcement; bumper = fender;
    button = press switch; cable = wire; cactus = succulent; calendar = appointment diary;
    camera = photographic device; campfire = fire pit; canoe = dugout boat; canvas = artist cloth;
    capsule = pill; caravan = camper van; carpet = floor covering; cartridge = toner cassette;
    casket = coffin; chandelier = hanging light; channel = communication line;
    chapel = small church; charcoal = barbecue briquettes; charger = power adapter;
    chassis = car frame; cheddar = hard cheese; chorus = choir; cider = fermented apple juice;
    circuit = wiring loop; clamp = vise grip; clipboard = writing board; cobweb = spider web;
    cockpit = flight deck; compass = direction finder; compost = mulch;
    compressor = air pressurizer; concrete = cement; condenser = cooling coil; coral = reef;
    corridor = passage; crate = wooden box; crowbar = pry bar; cruiser = patrol car;
    cushion = padding; cylinder = tube; debugger = code inspector; decoder = descrambler;
    denim = jeans material; depot = supply yard; detector = smoke alarm; diamond = precious gem;
    diaper = nappy; diploma = certificate; dishwasher = dish machine; doorbell = door chime;
    drawer = sliding compartment; dresser = clothes chest; dungeon = prison cell;
    dynamo = alternator; elbow = arm joint; elevator = lift; emerald = green gemstone;
    envelope = mailing cover; escalator = mechanical staircase; espresso = strong coffee;
    exhaust = tailpipe; fabric = textile; falcon = hawk; faucet = tap; fence = barrier;
    ferry = passenger boat; firewall = network guard; flannel = washcloth; flashlight = torch;
    flask = drinking bottle; folder = directory; footbridge = pedestrian crossing;
    forklift = lift truck; fountain = water spout; freezer = ice chest; fridge = refrigerator;
    funnel = pouring cone; furnace = heating unit; gadget = gizmo; galaxy = star cluster;
    garage = carport; garland = wreath; gasket = seal; gearbox = transmission; glacier = ice sheet;
    gravel = crushed stone; grinder = coffee mill; hallway = entrance hall; harbor = port;
    harmonica = mouth organ; harness = safety straps; harpoon = spear; headlamp = headlight;
    hearth = fireplace; helmet = hard hat; hinge = door pivot; holster = gun sheath;
    horizon = skyline; inkwell = ink pot; invoice = bill; jacket = coat; journal = diary;
    kettle = electric jug; keyboard = typing keys; kitten = young cat; ladder = stepladder;
    lagoon = shallow lake; laptop = portable computer; latch = door catch; lattice = grid;
    lawnmower = grass cutter; leash = dog lead; lettuce = salad leaves; lever = crank;
    library = reading room; lighthouse = light tower; lobster = crayfish; locket = pendant;
    lumber = sawn wood; mailbox = letterbox; mantel = mantelpiece; marker = felt pen;
    mattress = sleeping pad; meadow = grassland; meteor = shooting star; microphone = mic;
    mileage = distance travelled; mirror = reflecting glass; mitten = mitt;
    modem = broadband adapter; monitor = display screen; mosaic = tile picture; mountain = peak;
    muffin = cupcake; mural = wall painting; mushroom = toadstool; needle = sewing pin;
    nickel = five-cent coin; nozzle = spray head; odometer = distance gauge;
    orchard = fruit garden; oven = cooker; padlock = combination lock; paperclip = wire clip;
    parachute = chute; parcel = package; parrot = macaw; passport = travel document;
    patio = paved courtyard; pebble = smooth stone; pedal = foot control; pendulum = swinging bob;
    pigeon = dove; planter = flowerpot; plaster = drywall; plateau = mesa; pollen = flower dust;
    portal = gateway; postcard = picture card; pottery = ceramics; pouch = purse;
    printer = printing machine; propeller = rotor blade; puppet = marionette; quarry = rock pit;
    quilt = duvet; quiver = arrow holder; rabbit = bunny; racket = tennis bat; radiator = heater;
    raisin = dried grape; ramp = incline; razor = shaver; receipt = sales slip; referee = umpire;
    rifle = long gun; rocket = missile; rooster = cockerel; router = wifi hub;
    rudder = steering fin; sailboat = sloop; sandbox = sandpit; satchel = shoulder bag;
    saucepan = stewpan; saxophone = sax; scanner = document imager; sculpture = figurine;
    sensor = probe; server = host computer; shampoo = hair wash; shovel = spade;
    sidewalk = pavement; signpost = road sign; skillet = frying pan; sled = sleigh;
    slipper = house shoe; socket = wall outlet; speaker = loudspeaker; spreadsheet = excel sheet;
    sprinkler = lawn spray; stapler = staple gun; starfish = sea star; statue = monument;
    stopwatch = timer; stove = cooktop; strainer = colander; streetlamp = street light;
    submarine = undersea vessel; subway = metro; suitcase = luggage; swamp = marsh;
    tadpole = baby frog; tent = camping shelter; terminal = command line; throttle = accelerator;
    thunder = rumble; ticket = admission pass; tractor = farm vehicle; treadmill = running machine;
    tricycle = three-wheeler; trolley = shopping cart; trophy = award; tugboat = towboat;
    typewriter = typing machine; umbrella = rain shade; utensil = kitchen implement;
    vacuum = hoover; vase = flower jar; vest = waistcoat; warehouse = storehouse;
    watchtower = lookout; weathervane = wind vane; widget = ui control; windshield = windscreen;
    wingnut = butterfly nut; zipper = zip; acorn = oak nut; amplifier = amp; aquarium = fish tank;
    asphalt = tarmac; atlas = map book; bakery = bakehouse; bandwidth = throughput;
    barometer = pressure gauge; bazaar = market; beehive = bee colony box; blizzard = snowstorm;
    bunker = bomb shelter; butler = valet; cafeteria = canteen; calculator = number cruncher;
    carousel = merry-go-round; cashier = teller; castle = fortress; cinema = movie theater;
    citadel = stronghold; clinic = medical centre; clover = shamrock; cobbler = shoemaker;
    conveyor = transport belt; coyote = prairie wolf; cutlery = silverware; dentist = tooth doctor;
    dormitory = dorm; drumkit = percussion set; earmuff = ear warmer; eggplant = aubergine;
    embassy = consulate; ferret = polecat; fiesta = festival; fishbowl = goldfish bowl;
    foghorn = fog signal; fossil = petrified remains; freight = cargo; frigate = warship;
    gallery = art museum; glider = sailplane; grasshopper = locust; gumball = chewing gum;
    hairbrush = comb; hazelnut = filbert; highway = motorway; hilltop = summit; housekeeper = maid;
    kennel = doghouse; lamppost = light pole; landfill = rubbish dump; laundry = dirty clothes;
    lifeboat = rescue boat; limousine = limo; lipstick = lip colour; lollipop = lolly;
    mansion = manor; marathon = footrace; marmalade = citrus jam; merchant = trader;
    monastery = abbey; moped = motorbike; mosquito = gnat; motel = roadside inn;
    nightstand = bedside table; palace = royal residence; peacock = peafowl; peanut = groundnut;
    pharmacy = drugstore; pinecone = conifer cone; porridge = hot cereal; pudding = dessert;
    rattlesnake = pit viper; reindeer = caribou; riverbank = shore; sandpaper = abrasive paper;
    sawmill = wood mill; schoolyard = playground; seagull = gull; shipyard = dockyard;
    shoelace = bootlace; showroom = display hall; slingshot = catapult; spaceship = spacecraft;
    stairwell = stair shaft; stadium = arena; taxicab = taxi; toolbox = tool chest;
    tortoise = turtle; townhall = municipal building; tripod = three-legged stand;
    tuxedo = evening suit; vineyard = winery; walkway = promenade; wetland = marshland;
    whirlpool = vortex; windowsill = window ledge; wristwatch = timepiece; zucchini = courgette;
    """.split(";")
    if entry.strip()
)

# A fixing note's templates: six slots, one per fixing word. Terse, as field notes
# are, and without a word any question template uses (not even "the").
FIX_TEMPLATES = (
    "Rotating {} plus resetting {} cleared everything; {}, {}, {}, {} looked normal afterwards.",
    "Replacing {} by spare {} sorted everything out, after {} got cleaned, {} tightened, "
    "{} oiled, {} checked.",
    "Swapped {} into {}, flushed {}; {}, {}, {} behaved since.",
    "Recalibrated {} against {}, then reseated {} plus {}; {}, {} both settled.",
    "Draining {} then refilling {} worked, once {} got unplugged, {}, {}, {} reattached.",
)
# A symptom note's templates: three slots, for three problem words.
SYMPTOM_TEMPLATES = (
    "Noticed the {} {} during the morning shift; the {} part is unclear so far.",
    "Reported: {} and {} misbehaving near the {}, cause unknown.",
    "Logged a complaint about the {} and the {}; the {} was also flagged.",
    "Investigating odd {} {} behaviour around the {} today.",
)
# Notes that are neither: bookkeeping of everyday work.
NEUTRAL_TEMPLATES = (
    "Wrote down the {} and {} figures for the weekly summary.",
    "Ordered a new {}, a {} and two {} for the storeroom.",
    "Meeting notes: discussed the {} plan and the {} schedule.",
    "Inventory counted the {}, the {}, the {} and the {}.",
    "Moved the {} next to the {} in the storeroom.",
)
NOTE_TEMPLATES = FIX_TEMPLATES + SYMPTOM_TEMPLATES + NEUTRAL_TEMPLATES

# Questions: filler common to every type, two to four problem words.
QUESTION_TEMPLATES = (
    "How do I fix it when the {} {} again?",
    "What helped last time the {} was {}?",
    "Any idea why {} keeps {} {}?",
    "Why is the {} {} {} acting up?",
    "What should I do about {} {} and {} {}?",
    "Is there a known remedy for {} {} with {}?",
    "Who solved the {} {} {} trouble before?",
    "How did we handle {} and {} last time?",
    "What was done when {} {} hit the {} {}?",
    "Has anyone seen {} {} near the {} before?",
    "Any tips for {} {} {} {}?",
    "Why would the {} suddenly fail with {}?",
)

# Questions in other words: filler no other template, question or note uses.
SYNONYM_TEMPLATES = (
    "Our {}, {} stopped responding overnight; suggestions?",
    "Broken {}, {}, {}: advice please.",
    "Our {}, {} went haywire yesterday; thoughts?",
    "Need guidance regarding {}, {}, {}, {}.",
    "Recommendations wanted: {}, {}, {} malfunctioning.",
)

# What a caller would leave out of a question's concepts: function and question
# words, and the filler every question template shares (it names no problem).
QUESTION_STOP_WORDS = frozenset(
    """
    how what why who when which where did does do the and was were is are any anyone has have
    with for about should would could there again before last time it we the fix helped idea
    keeps acting remedy known solved trouble handle done hit seen near tips suddenly fail
    """.split()
)

_ALPHA = re.compile(r"[a-z]+")
# The filler of the synonym templates, left out of a synonym wording's concepts alike.
SYNONYM_STOP_WORDS = frozenset(_ALPHA.findall(" ".join(SYNONYM_TEMPLATES).lower()))


@functools.cache
def _stemmer() -> Any:
    import Stemmer  # PyStemmer, imported when a workload is made

    return Stemmer.Stemmer("english")


def tokens(text: str) -> list[str]:
    """Lower-cased alphabetic tokens."""
    return _ALPHA.findall(text.lower())


def stems(text: str) -> set[str]:
    """Snowball (English) stems of a text's alphabetic tokens."""
    return set(_stemmer().stemWords(tokens(text)))


def content_words(question: str) -> list[str]:
    """A question's concepts as a caller would give them: tokens of three letters or more,
    in order, without the question stop words."""
    words = [
        t
        for t in tokens(question)
        if len(t) >= 3 and t not in QUESTION_STOP_WORDS and t not in SYNONYM_STOP_WORDS
    ]
    return list(dict.fromkeys(words))


@dataclass(frozen=True)
class Note:
    key: str
    text: str
    role: str  # "fix", "symptom" or "noise"
    type_index: int | None = None


@dataclass(frozen=True)
class Question:
    text: str
    type_index: int
    new_template: bool = False  # held out: a template no training wording of its type used
    synonyms: bool = False  # held out: its symptoms said in other words (`SYNONYMS`)


@dataclass
class ProblemType:
    index: int
    problem_words: list[str]
    fixing_words: list[str]
    training: list[Question] = field(default_factory=list)
    held_out: list[Question] = field(default_factory=list)
    synonyms: list[Question] = field(default_factory=list)

    @property
    def fix_key(self) -> str:
        return f"fix-{self.index:03d}"


@dataclass
class Workload:
    seed: int
    types: list[ProblemType]
    notes: list[Note]  # in write order
    held_out_only_templates: list[int]

    def fingerprint(self) -> str:
        """A digest of every note and question: equal workloads, equal digests."""
        parts = [n.key + "\t" + n.text for n in self.notes] + [
            q.text for t in self.types for q in (*t.training, *t.held_out, *t.synonyms)
        ]
        return "sha256:" + hashlib.sha256("\n".join(parts).encode()).hexdigest()


def vocabulary() -> list[str]:
    """The word list less any word a template or the question stop list also uses."""
    fix_stems = set().union(*(stems(t) for t in FIX_TEMPLATES))
    question_stems = set().union(*(stems(t) for t in QUESTION_TEMPLATES))
    if fix_stems & question_stems:
        raise AssertionError(f"fix and question templates share {fix_stems & question_stems}")
    taken = _template_stems()
    synonym_filler = set().union(*(stems(t) for t in SYNONYM_TEMPLATES))
    if synonym_filler & taken:
        raise AssertionError(f"synonym templates share {synonym_filler & taken} with others")
    taken |= synonym_filler
    words = []
    for word in WORDS:  # one word per stem, so no two drawn words are inflections of each other
        stem = _stemmer().stemWord(word)
        if stem not in taken:
            taken.add(stem)
            words.append(word)
    return words


def _template_stems() -> set[str]:
    """Stems of every note and question template and of the question stop words."""
    taken = set().union(*(stems(t) for t in NOTE_TEMPLATES + QUESTION_TEMPLATES))
    return taken | word_stems(QUESTION_STOP_WORDS)


def speakable(words: Iterable[str]) -> list[str]:
    """The words that can be problem words: those whose synonym shares no stem with any
    word of `WORDS`, any template or stop word, or the synonym templates (whatever a
    workload draws, its synonym wordings then share no stem with its other text)."""
    taken = word_stems(WORDS) | _template_stems()
    taken |= set().union(*(stems(t) for t in SYNONYM_TEMPLATES))
    return [w for w in words if w in SYNONYMS and not stems(SYNONYMS[w]) & taken]


def generate(seed: int = 0, types: int = 40, notes: int = 2000) -> Workload:
    """The workload for ``seed``: ``types`` problem types in a store of ``notes`` notes."""
    rng = random.Random(seed)
    words = vocabulary()
    rng.shuffle(words)
    pool = speakable(words)
    if types * PROBLEM_WORDS > len(pool):
        raise ValueError(f"{types} types need more problem words than the {len(pool)} synonyms")
    problem_words = pool[: types * PROBLEM_WORDS]
    chosen = set(problem_words)
    rest = [w for w in words if w not in chosen]
    if types * FIXING_WORDS + MIN_NOISE_WORDS > len(rest):
        raise ValueError(f"{types} types need more words than the list's {len(words)}")
    if notes < types * (1 + SYMPTOM_NOTES):
        raise ValueError(f"{notes} notes cannot hold {types} types' fixing and symptom notes")
    problem_types = [
        ProblemType(
            i,
            problem_words[i * PROBLEM_WORDS : (i + 1) * PROBLEM_WORDS],
            rest[i * FIXING_WORDS : (i + 1) * FIXING_WORDS],
        )
        for i in range(types)
    ]
    for problem in problem_types:
        if word_stems(problem.problem_words) & word_stems(problem.fixing_words):
            raise AssertionError(f"type {problem.index}'s problem and fixing words share a stem")
    noise_words = rest[types * FIXING_WORDS :]
    order = list(range(len(QUESTION_TEMPLATES)))
    rng.shuffle(order)
    held_out_only, shared = order[:HELD_OUT_ONLY_TEMPLATES], order[HELD_OUT_ONLY_TEMPLATES:]
    for problem in problem_types:
        _ask(problem, rng, held_out_only, shared)
    written = _notes(problem_types, noise_words, notes, rng)
    workload = Workload(seed, problem_types, written, sorted(held_out_only))
    leaks = fix_overlaps(workload)
    if leaks:
        raise AssertionError(f"questions share words with their fixing notes: {leaks}")
    # A stream of its own: the synonym wordings change nothing else the seed draws.
    _say_otherwise(workload, random.Random(f"{seed}:synonyms"))
    leaks = synonym_overlaps(workload)
    if leaks:
        raise AssertionError(f"synonym wordings share stems with training or fixes: {leaks}")
    return workload


def _fill(template: str, words: Sequence[str]) -> str:
    return template.format(*words)


def _slots(template: str) -> int:
    return template.count("{}")


def _ask(
    problem: ProblemType, rng: random.Random, held_out_only: list[int], shared: list[int]
) -> None:
    """The training and held-out wordings of one type: held-out ones in other word sets."""
    trained = rng.sample(shared, TRAINING)
    seen: set[frozenset[str]] = set()
    for index in trained:
        picked = _pick(problem.problem_words, _slots(QUESTION_TEMPLATES[index]), seen, rng)
        problem.training.append(Question(_fill(QUESTION_TEMPLATES[index], picked), problem.index))
    fresh = rng.sample(held_out_only, HELD_OUT_NEW_TEMPLATES)
    reused = rng.sample(trained, HELD_OUT - HELD_OUT_NEW_TEMPLATES)
    for index in fresh + reused:
        picked = _pick(problem.problem_words, _slots(QUESTION_TEMPLATES[index]), seen, rng)
        text = _fill(QUESTION_TEMPLATES[index], picked)
        problem.held_out.append(Question(text, problem.index, new_template=index in fresh))


def _pick(
    words: Sequence[str], count: int, seen: set[frozenset[str]], rng: random.Random
) -> list[str]:
    """``count`` of ``words`` in a random order, as a set no earlier wording used."""
    while True:
        picked = rng.sample(list(words), count)
        if frozenset(picked) not in seen:
            seen.add(frozenset(picked))
            return picked


def _notes(
    problem_types: Sequence[ProblemType], noise_words: Sequence[str], total: int, rng: random.Random
) -> list[Note]:
    """Every type's fixing and symptom notes and distractors up to ``total``, shuffled."""
    notes = []
    for problem in problem_types:
        fixing = rng.sample(problem.fixing_words, FIXING_WORDS)
        notes.append(
            Note(problem.fix_key, _fill(rng.choice(FIX_TEMPLATES), fixing), "fix", problem.index)
        )
        for n in range(SYMPTOM_NOTES):
            words = rng.sample(problem.problem_words, 3)
            notes.append(
                Note(
                    f"symptom-{problem.index:03d}-{n}",
                    _fill(SYMPTOM_TEMPLATES[n % len(SYMPTOM_TEMPLATES)], words),
                    "symptom",
                    problem.index,
                )
            )
    texts = {n.text for n in notes}
    while len(notes) < total:
        template = rng.choice(NOTE_TEMPLATES)
        text = _fill(template, rng.sample(list(noise_words), _slots(template)))
        if text not in texts:
            texts.add(text)
            notes.append(Note(f"noise-{len(notes):05d}", text, "noise"))
    rng.shuffle(notes)
    return notes


def fix_overlaps(workload: Workload) -> list[tuple[str, set[str]]]:
    """(question, shared stems) for every question sharing a stem with its fixing note."""
    fixes = {n.type_index: stems(n.text) for n in workload.notes if n.role == "fix"}
    found = []
    for problem in workload.types:
        for question in (*problem.training, *problem.held_out):
            shared = stems(question.text) & fixes[problem.index]
            if shared:
                found.append((question.text, shared))
    return found


def taught_stems(workload: Workload) -> set[str]:
    """Stems of every training question of every type and of every fixing note."""
    found = {s for n in workload.notes if n.role == "fix" for s in stems(n.text)}
    return found.union(*(stems(q.text) for t in workload.types for q in t.training))


def _say_otherwise(workload: Workload, rng: random.Random) -> None:
    """Each type's synonym wordings: its problem words in `SYNONYMS`' words, in synonym
    templates; a problem word whose synonym shares a stem with a training question or
    a fixing note is left out of them."""
    taught = taught_stems(workload)
    for problem in workload.types:
        words = [w for w in problem.problem_words if not stems(SYNONYMS[w]) & taught]
        seen: set[frozenset[str]] = set()
        for index in rng.sample(range(len(SYNONYM_TEMPLATES)), SYNONYM_WORDINGS):
            template = SYNONYM_TEMPLATES[index]
            if _slots(template) > len(words):
                raise AssertionError(f"type {problem.index} has too few words with a synonym")
            picked = _pick(words, _slots(template), seen, rng)
            text = _fill(template, [SYNONYMS[w] for w in picked])
            problem.synonyms.append(Question(text, problem.index, True, synonyms=True))


def synonym_overlaps(workload: Workload) -> list[tuple[str, set[str]]]:
    """(synonym wording, shared stems) for every synonym wording sharing a stem with a
    training question of any type or with any fixing note."""
    taught = taught_stems(workload)
    found = []
    for problem in workload.types:
        for question in problem.synonyms:
            shared = stems(question.text) & taught
            if shared:
                found.append((question.text, shared))
    return found


def word_stems(words: Iterable[str]) -> set[str]:
    """The Snowball stems of some words."""
    return set(_stemmer().stemWords(list(words)))
