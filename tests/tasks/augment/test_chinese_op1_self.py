"""Chinese operation 1 refuses a host or donor that is incoherent in itself (SD's decomposed parts often
are): a question that asks what a statement of the same text states, a question about a thing the
narrative never names, and a replaced host statement that shares nothing with the rest of its host. Each
refusal fires on an incoherent hand-made problem and not on a coherent Math23K-like one."""
from tasks.augment.base import AugmentConfig, clause_units
from tasks.augment.entities import read
from tasks.augment.geca import geca_op1
from tasks.augment.zh_self import statement_unrelated, zh_incoherent
from tests.tasks.augment.zh_cases import zh


def incoherent(problem, role="host"):
    return zh_incoherent(problem, clause_units(problem), read(problem, elided=role == "donor"), role)


def unrelated(problem, clause=0):
    return statement_unrelated(problem, clause_units(problem), clause)


def test_a_question_asking_what_its_own_statement_states_is_refused():
    father = zh("h", "爸爸的体重是60千克，我的体重是爸爸的(2/3)，爸爸的体重是多少千克？", "x=60", 60)
    assert incoherent(father) == "op1_zh_host_question_asks_its_own_statement"
    books = zh("d", "学校买来2250本练习本，还剩40本做为备用．学校一共买来多少本练习本？", "x=2250", 2250)
    assert incoherent(books, "donor") == "op1_zh_donor_question_asks_its_own_statement"
    # a clause naming only its noun says what the clause before says: 有, 果园
    trees = zh("d", "果园里有21棵杏树，27棵桃树，果园里有桃树多少棵？", "x=27", 27)
    assert incoherent(trees, "donor") == "op1_zh_donor_question_asks_its_own_statement"


def test_a_question_asking_the_amount_after_its_story_or_of_someone_else_is_not_refused():
    shop = zh("h", "商店有苹果280千克，上午卖出132千克，下午购进145千克，商店有苹果多少千克？", "x=280-132+145", 293)
    assert incoherent(shop) is None  # the sales and purchases change what the first clause states
    stamps = zh("d", "小芳有72张邮票，小强的邮票是小芳的(2/3)，小强有多少张邮票？", "x=72*(2/3)", 48)
    assert incoherent(stamps, "donor") is None  # 小芳's stamps, 小强 asked
    father = zh("d", "妈妈的体重是45千克，是爸爸体重的60%，爸爸体重多少千克？", "x=45/0.6", 75)
    assert incoherent(father, "donor") is None


def test_a_question_about_a_thing_its_narrative_never_names_is_refused():
    dates = zh("d", "果园里有6行枣树，每行12棵，果园里有桃树多少棵？", "x=6*12", 72)
    assert incoherent(dates, "donor") == "op1_zh_donor_question_names_a_thing_not_told"
    peaches = zh("h", "果园里有桃树330棵，苹果树的数量是桃树的5倍，果园里有梨树多少棵？", "x=330*5", 1650)
    assert incoherent(peaches) == "op1_zh_host_question_names_a_thing_not_told"


def test_a_question_about_the_thing_told_or_a_total_of_kinds_is_not_refused():
    dates = zh("d", "果园里有6行枣树，每行12棵，果园里有枣树多少棵？", "x=6*12", 72)
    assert incoherent(dates, "donor") is None
    fruit = zh("h", "果园里有桃树120棵，梨树80棵，一共有果树多少棵？", "x=120+80", 200)
    assert incoherent(fruit) is None
    pears = zh("h", "果园里有桃树360棵，梨树的棵数是桃树的(3/4)，果园里有梨树多少棵？", "x=360*(3/4)", 270)
    assert incoherent(pears) is None


def test_a_replaced_statement_sharing_nothing_with_the_rest_is_refused():
    stamps = zh("h", "小新有96张邮票，小兰课外书的本数是小平的(3/4)．小兰有课外书多少本？", "x=96*(3/4)", 72)
    assert unrelated(stamps)  # 小新 and 邮票 never reappear
    boys = zh("h", "男生有42人，科技小组的人数是生物小组的6倍，科技小组有多少人？", "x=42*6", 252)
    assert unrelated(boys)
    donor = zh("d", "某班有女生30人，男生是女生的0.8倍，男生有多少人？", "x=30*0.8", 24)
    batch = geca_op1([boys, donor], AugmentConfig(operators=("geca_op1",)), 0, 1)
    assert batch.candidates == [] and batch.rejected["op1_zh_replaced_statement_unrelated"] == 1


def test_a_statement_linked_by_its_thing_its_kind_or_only_its_unit_is_not_refused():
    rope = zh("h", "一根绳子长(8/9)米，截下(1/4)米，还剩多少米？", "x=(8/9)-(1/4)", "23/36")
    assert not unrelated(rope)  # the rest names no thing: the unit links them
    pupils = zh("h", "男生有25人，女生有30人，全班有多少人？", "x=25+30", 55)
    assert not unrelated(pupils)  # 女生 is the other kind of 男生
    trees = zh("h", "果园里有桃树120棵，梨树80棵，一共有果树多少棵？", "x=120+80", 200)
    assert not unrelated(trees) and not unrelated(trees, 1)
    stamps = zh("h", "小芳有72张邮票，小强的邮票是小芳的(2/3)，小强有多少张邮票？", "x=72*(2/3)", 48)
    assert not unrelated(stamps)


def test_math23k_originals_read_as_coherent_are_not_refused():
    eggs = zh("h", "一个鸡蛋约重(1/25)千克，妈妈今天买回65个鸡蛋，这些鸡蛋约重多少千克？", "x=(1/25)*65", "13/5")
    assert incoherent(eggs) is None  # one egg's weight is stated, these eggs' is asked
    blood = zh("h", "血液约占体重的(1/13)，血液里约含(2/3)的水，爸爸的体重是69千克，爸爸的血液里约含水多少千克？",
               "x=69*(1/13)*(2/3)", "46/13")
    assert incoherent(blood) is None  # jieba's 含水 has no kin among the told things
    school = zh("d", "育苗小学有女生360人，比男生少(1/5)，这间小学有学生多少人？", "x=360+360/(1-1/5)", 810)
    assert incoherent(school, "donor") is None  # 学生 is the kind of 女生 and 男生
    rope = zh("h", "一根绳子长50米，做了6根同样的跳绳后，还剩38米，平均每根跳绳长多少米？", "x=(50-38)/6", 2)
    assert not unrelated(rope)  # 绳 of 绳子 in 跳绳
    wire = zh("h", "5米长的铁丝，第一次用去总长度的20%，第二次用去(1/2)米，还剩下多少米？", "x=5-5*0.2-(1/2)", 3.5)
    assert not unrelated(wire)  # 总长度 is a property, not another thing


def test_more_math23k_originals_are_not_refused():
    trucks = zh("h", "一辆卡车可以装3吨货物，这样的5辆卡车可以装多少吨货物？", "x=3*5", 15)
    assert incoherent(trucks) is None  # the question asks of five trucks
    seats = zh("h", "如果每排坐6人，可以坐满12排；如果每排坐8人，则可以坐满多少排？", "x=6*12/8", 9)
    assert incoherent(seats) is None  # another case
    flowers = zh("h", "同学们做了180朵纸花，每25朵扎成一束，已经扎了6束，还剩多少朵花？", "x=180-25*6", 30)
    assert incoherent(flowers) is None  # jieba's 朵花 is no sibling of 纸花
    rice = zh("h", "仓库运来大米240吨，运来的大豆是大米吨数的(5/6)，大豆的吨数又是面粉的(3/4)．运来面粉多少吨？",
              "x=240*(5/6)/(3/4)", "800/3")
    assert not unrelated(rice)  # 大米 and 运来 reappear
    pupils = zh("h", "6(二)班男生人数是女生人数的(2/3)，全班有45人，女生有多少人？", "x=45/(1+2/3)", 27)
    assert not unrelated(pupils, 1)  # 全班 is the whole of the rest's parts


def test_a_question_asking_a_sum_another_moment_or_a_named_kind_is_not_refused():
    wire = zh("h", "一条铁丝3米，用去(2/3)后，又用去(1/3)米，用去多少米？", "x=3*(2/3)+(1/3)", "7/3")
    assert incoherent(wire) is None  # 又: the question asks both uses
    parts = zh("h", "甲每时加工65个，乙每时加工75个，两人加工12个小时，一共加工了多少个零件？", "x=(65+75)*12", 1680)
    assert incoherent(parts) is None
    spring = zh("h", "称2千克的物体，弹簧长12.5厘米；称6千克的物体，弹簧长13.5厘米．没有称物体时，弹簧长多少厘米？",
                "x=12.5-(13.5-12.5)/(6-2)*2", 12)
    assert incoherent(spring) is None
    balls = zh("h", "盒子里有红、黄、蓝球60个，红球有多少个？", "x=60", 60)
    assert incoherent(balls) is None  # 红 is named in the narrative


def test_a_statement_the_question_compares_from_is_not_unrelated():
    book = zh("h", "一本360页的童话书，小刚用20天读完，小芳用30天读完．小刚平均每天比小芳多读多少页？", "x=360/20-360/30", 6)
    assert not unrelated(book)  # 比小芳 is the question's comparison, not a base the narrative leaves out


def test_a_statement_of_one_place_does_not_answer_a_question_of_the_whole():
    seats = zh("h", "剧院楼下有座位840个，是楼上座位的21倍，这个剧院一共有多少个座位？", "x=840+840/21", 880)
    assert incoherent(seats) is None  # 楼下 is one floor; the question asks the theatre


def test_a_negated_statement_another_piece_or_another_symbol_is_not_asked_by_the_question():
    both = zh("h", "希望小学四年级有50名学生，有26人参加乒乓比赛，21人参加篮球比赛，两项比赛都不参加的有17人．两项比赛都参加的有多少人？",
              "x=26+21-(50-17)", 14)
    assert incoherent(both) is None  # 都不参加 is not 都参加
    cloth = zh("h", "一段布长(4/5)米，正好是另一段布的长度的(3/5)，另一段布长多少米？", "x=(4/5)/(3/5)", "4/3")
    assert incoherent(cloth) is None
    shapes = zh("h", "有12个△，△的个数是○的2倍，○有多少个？", "x=12/2", 6)
    assert incoherent(shapes) is None
