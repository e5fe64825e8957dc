import Foundation
import Testing

/// `trellis find`: the condition language (parsed by the tool, run by the library's planner), values converted to
/// each attribute's type, sorting and paging, `--explain`, and every refusal with the column it points at.
@Suite struct FindCommandTests {
    /// The IDs `find --json` prints for `condition` (and any more arguments) on the task store.
    func ids(_ store: URL, _ condition: String, _ more: [String] = []) throws -> [String] {
        let result = try Tool.run(["find", store.path, "Task", "--where", condition, "--json"] + more)
        #expect(result.status == 0, "\(condition): \(result)")
        let objects = try #require(try result.json()["objects"] as? [[String: Any]], "\(result)")
        return objects.compactMap { $0["id"] as? String }
    }

    @Test func anEqualityPrintsEachMatchWithItsValuesAndLinksThenTheCount() throws {
        let store = try TaskFixture.make()
        defer { Fixture.cleanUp(store) }
        let before = try MigrationFixture.files(store)
        let result = try Tool.run(["find", store.path, "Task", "--where", #"title == "Buy milk""#])
        #expect(result.status == 0, "\(result)")
        #expect(
            result.stdout.split(separator: "\n").map(String.init) == [
                #"Task#1  title="Buy milk", done=false, stars=3, tiny=1, score=1.5, due=2026-11-29T00:00:00.000000Z, "#
                    + "key=00000000-0000-0000-0000-000000000001, blob=<5 bytes: 48656c6c6f>, price=1.1, "
                    + "site=https://example.com/a; project → [Project#1]",
                "1 of 4 Task objects match (as of sequence 3)",
            ])
        #expect(result.stderr.isEmpty)

        let all = try Tool.run(["find", store.path, "Project"])
        #expect(
            all.stdout.split(separator: "\n").map(String.init) == [
                #"Project#1  name="Home"; tasks → [Task#1]"#, #"Project#2  name="Work"; tasks → [Task#2, Task#3]"#,
                "2 of 2 Project objects match (as of sequence 3)",
            ])
        #expect(try MigrationFixture.files(store) == before, "find opens the store read-only and writes nothing")
    }

    @Test func jsonHasTheDocumentedFieldsAndObjectsAsExportWritesThem() throws {
        let store = try TaskFixture.make()
        defer { Fixture.cleanUp(store) }
        let json = try Tool.run(["find", store.path, "Task", "--where", "stars == 5", "--json"]).json()
        #expect(Array(json.keys).sorted() == ["entity", "matches", "objects", "plan", "sequence", "store", "where"])
        #expect(json["store"] as? String == store.path)
        #expect(json["sequence"] as? Int == 3)
        #expect(json["entity"] as? String == "Task")
        #expect(json["where"] as? String == "stars == 5")
        #expect(json["matches"] as? Int == 1)
        let objects = try #require(json["objects"] as? [[String: Any]])
        #expect(objects.count == 1)
        #expect(objects[0]["id"] as? String == "Task#2")
        let values = try #require(objects[0]["values"] as? [String: Any])
        #expect(values["title"] as? String == "Write report")
        #expect(values["blob"] as? String == "SGVsbG8gd29ybGQh")
        #expect(values["price"] as? String == "99.99")
        #expect(values["due"] as? String == "2026-12-01T09:30:00.000000Z")
        #expect(values["site"] is NSNull)
        #expect(objects[0]["relationships"] as? [String: [String]] == ["project": ["Project#2"]])
        let plan = try #require(json["plan"] as? [String: Any])
        #expect(plan["access"] as? String == "indexEquality")
        #expect(plan["index"] as? [String] == ["stars"])
    }

    @Test func andOrNotParenthesesAndInCombineWithTheUsualPrecedence() throws {
        let store = try TaskFixture.make()
        defer { Fixture.cleanUp(store) }
        // && binds tighter than ||, ! tighter than both; the words and, or, not mean the same.
        #expect(try ids(store, #"stars == 3 && !(done == true) || title == 'Call "Bob"'"#) == ["Task#1", "Task#3"])
        #expect(try ids(store, "stars == 3 and (done == true or tiny == 1)") == ["Task#1", "Task#4"])
        #expect(try ids(store, "not (stars == 3) and (done == false || done == true)") == ["Task#2", "Task#3"])
        #expect(try ids(store, "!stars >= 3") == ["Task#3"])
        #expect(try ids(store, "stars in [1, 5]") == ["Task#2", "Task#3"])
        #expect(try ids(store, "stars not in [1, 5]") == ["Task#1", "Task#4"])
        #expect(try ids(store, "stars in []") == [])
        #expect(try ids(store, "stars != 3 && stars < 5") == ["Task#3"])
        #expect(try ids(store, "stars <= 3 && stars > 1") == ["Task#1", "Task#4"])
        #expect(try ids(store, #"title == "Call \"Bob\"""#) == ["Task#3"])
        #expect(try ids(store, #"title == "Buy\u{20}eggs""#) == ["Task#4"])
    }

    @Test func valuesAreConvertedToEachAttributesType() throws {
        let store = try TaskFixture.make()
        defer { Fixture.cleanUp(store) }
        // Dates as ISO 8601 text: a day (midnight UTC), a time in UTC, a time with an offset.
        #expect(try ids(store, #"due < "2026-11-30""#) == ["Task#1"])
        #expect(try ids(store, #"due >= "2026-11-30T12:00:00Z""#) == ["Task#2", "Task#4"])
        #expect(try ids(store, #"due == "2026-11-30T13:00:00+01:00""#) == ["Task#4"])
        #expect(try ids(store, #"due == "2026-12-01T09:30:00.000Z""#) == ["Task#2"])
        #expect(try ids(store, "due == null") == ["Task#3"])
        #expect(try ids(store, "due != nil") == ["Task#1", "Task#2", "Task#4"])
        // UUIDs bare or quoted; bytes as 0x hex or base64 text; a decimal keeps its digits; integers for doubles.
        #expect(try ids(store, "key == 00000000-0000-0000-0000-000000000002") == ["Task#2"])
        #expect(try ids(store, #"key in ["00000000-0000-0000-0000-000000000004"]"#) == ["Task#4"])
        #expect(try ids(store, "blob == 0x48656C6c6f") == ["Task#1"])
        #expect(try ids(store, #"blob == "AP8=""#) == ["Task#3"])
        #expect(try ids(store, "blob == 0x") == ["Task#4"])
        #expect(try ids(store, "price == 99.99") == ["Task#2"])
        #expect(try ids(store, #"price > "1.5""#) == ["Task#2", "Task#4"])
        #expect(try ids(store, "price == 2") == ["Task#4"])
        #expect(try ids(store, "score > 1") == ["Task#1", "Task#2", "Task#4"])
        #expect(try ids(store, "score == 25e-2") == ["Task#3"])
        #expect(try ids(store, "tiny < -2") == ["Task#3"])
        #expect(try ids(store, "done == true") == ["Task#2", "Task#4"])
        #expect(try ids(store, #"site == "https://example.com/a""#) == ["Task#1"])
        // A path through a to-one relationship; a missing target makes the value null.
        #expect(try ids(store, #"project.name == "Work""#) == ["Task#2", "Task#3"])
        #expect(try ids(store, "project.name == null") == ["Task#4"])
    }

    @Test func sortLimitAndOffsetPageTheMatchesAndTheCountIsOfAllOfThem() throws {
        let store = try TaskFixture.make()
        defer { Fixture.cleanUp(store) }
        #expect(
            try ids(store, "stars > 0", ["--sort", "stars:desc,title"]) == ["Task#2", "Task#4", "Task#1", "Task#3"])
        #expect(try ids(store, "stars > 0", ["--sort", "score"]) == ["Task#3", "Task#1", "Task#2", "Task#4"])
        let page = try Tool.run([
            "find", store.path, "Task", "--sort", "stars:desc,title:asc", "--limit", "2", "--offset", "1", "--json",
        ]).json()
        #expect(page["matches"] as? Int == 4)
        #expect((page["objects"] as? [[String: Any]])?.map { $0["id"] as? String } == ["Task#4", "Task#1"])
        let text = try Tool.run(["find", store.path, "Task", "--where", "done == false", "--limit", "1"])
        #expect(text.status == 0)
        #expect(text.stdout.split(separator: "\n").last == "2 of 4 Task objects match; 1 shown (as of sequence 3)")
    }

    @Test func explainPrintsTheLibrarysPlanInsteadOfTheObjects() throws {
        let store = try TaskFixture.make()
        defer { Fixture.cleanUp(store) }
        let text = try Tool.run(["find", store.path, "Task", "--where", "stars >= 3", "--explain"])
        #expect(text.status == 0, "\(text)")
        #expect(text.stdout.split(separator: "\n").count == 1)
        #expect(text.stdout.hasPrefix("plan: Task: index range on (stars) (stars >= 3), ~3 candidates; "), "\(text)")

        let json = try Tool.run(["find", store.path, "Task", "--where", #"title == "x""#, "--explain", "--json"]).json()
        #expect(json["objects"] == nil && json["matches"] == nil)
        let plan = try #require(json["plan"] as? [String: Any])
        #expect(
            Set(plan.keys) == ["description", "access", "index", "bounds", "candidates", "filters", "sortedByIndex"])
        #expect(plan["index"] is NSNull)
        #expect(plan["candidates"] as? Int == 4)
        #expect(plan["filters"] as? Bool == true)
        #expect((plan["description"] as? String)?.hasPrefix("Task: ") == true)
    }

    @Test func aConditionThatDoesNotParseIsAUsageErrorPointingAtItsColumn() throws {
        let store = try TaskFixture.make()
        defer { Fixture.cleanUp(store) }
        let cases: [(String, String, Int)] = [
            ("stars >", "expected a value", 8),
            (
                "stars >> 3",
                "expected a value (\"text\", a number, true, false, null, a UUID or 0x bytes) after '>', found '>'", 8
            ),
            (#"title = "x""#, "'=' alone is not an operator; compare with '=='", 7),
            ("stars == 3 & done == true", "'&' alone is not an operator; write '&&' or 'and'", 12),
            ("(stars == 3", "expected ')' to close the '(' at column 1, found the end of the condition", 12),
            ("stars == 3 stars", "expected '&&', '||' or the end of the condition, found the name 'stars'", 12),
            (#"title == "open"#, "the string that starts here has no closing \"", 10),
            (#"title == "\q""#, "unknown escape '\\q'", 11),
            ("stars in [1, 2", "expected ',' or ']' in the list, found the end of the condition", 15),
            ("stars in 1", "expected '[' to start the list after 'in', found the value 1", 10),
            ("stars", "expected a comparison (==, !=, <, <=, >, >=, in, not in, contains, isEmpty) after 'stars'", 6),
            ("== 3", "expected a comparison such as title == \"Buy milk\"", 1),
            ("stars == 12x", "unexpected 'x' in the number 12", 12),
            ("blob == 0xabc", "0x bytes take two hexadecimal digits per byte; this has 3", 9),
            ("project. == 1", "a '.' in a name must be followed by the next name of the path", 8),
            ("stars == 3 # comment", "unexpected character '#'", 12),
            ("", "expected a comparison such as", 1),
        ]
        for (condition, message, column) in cases {
            let result = try Tool.run(["find", store.path, "Task", "--where", condition])
            #expect(result.status == 2, "\(condition): \(result)")
            #expect(result.stderr.contains(message), "\(condition): \(result)")
            #expect(result.stderr.contains("(column \(column))"), "\(condition): \(result)")
            #expect(result.stdout.isEmpty, "\(condition): \(result)")
        }
        // The condition is repeated with a caret under the column.
        let caret = try Tool.run(["find", store.path, "Task", "--where", "stars >> 3"])
        #expect(caret.stderr.contains("\n  stars >> 3\n         ^\n"), "\(caret)")
        // Syntax is checked before the store is opened: a missing store is still exit 2.
        let early = try Tool.run(["find", Fixture.newDirectory("nowhere").path, "Task", "--where", "stars >"])
        #expect(early.status == 2, "\(early)")
    }

    @Test func namesAndValuesTheSchemaDoesNotFitAreUsageErrorsNamingWhatIsThere() throws {
        let store = try TaskFixture.make()
        defer { Fixture.cleanUp(store) }
        let cases: [([String], String)] = [
            (["Nope"], "the store has no entity 'Nope' (it has: Project, Task)"),
            (
                ["Task", "--where", "titel == 1"],
                "Task has no attribute 'titel' (its attributes: title, done, stars, tiny, score, due, key, blob, price, "
                    + "site) (column 1)"
            ),
            (
                ["Task", "--where", "project.nam == 1"],
                "Project has no attribute 'nam' (its attributes: name) (column 9)"
            ),
            (
                ["Task", "--where", "owner.name == 1"],
                "Task has no relationship 'owner' (its relationships: project) (column 1)"
            ),
            (
                ["Task", "--where", "project == 1"],
                "'project' is a relationship of Task; compare an attribute of Project such as project.name (column 1)"
            ),
            (
                ["Project", "--where", #"tasks.title == "x""#],
                "'tasks' is a to-many relationship; a path follows to-one relationships only (column 1)"
            ),
            (
                ["Task", "--where", "stars.x == 1"],
                "'stars' is an attribute of Task; only to-one relationships are followed with '.' (column 1)"
            ),
            (["Task", "--where", #"stars == "three""#], #"'stars' is Int; "three" is not one (write a whole number)"#),
            (["Task", "--where", "stars == 2.5"], "'stars' is Int; 2.5 is not one (write a whole number) (column 10)"),
            (["Task", "--where", "tiny == 300"], "'tiny' is Int8; 300 does not fit (column 9)"),
            (
                ["Task", "--where", "stars == 99999999999999999999"],
                "'stars' is Int; 99999999999999999999 is out of range"
            ),
            (["Task", "--where", #"due < "tomorrow""#], #"'due' is Date; "tomorrow" is not one (write ISO 8601 text"#),
            (["Task", "--where", #"key == "k""#], #"'key' is UUID; "k" is not one (write a UUID, bare or in quotes)"#),
            (["Task", "--where", "done == 1"], "'done' is Bool; 1 is not one (write true or false) (column 9)"),
            (["Task", "--where", #"price == "1.5x""#], #"'price' is Decimal; "1.5x" is not one"#),
            (
                ["Task", "--where", "stars in [1, \"2\"]"],
                #"'stars' is Int; "2" is not one (write a whole number) (column 14)"#
            ),
            (
                ["Task", "--where", "due < null"],
                "'<' with null matches nothing; test for null with == null or != null"
            ),
            (["Task", "--sort", "nope"], "--sort: Task has no attribute 'nope' (its attributes: title,"),
            (
                ["Task", "--sort", "project.name"],
                "--sort: 'project.name' is a path; sort by an attribute of Task itself"
            ),
            (["Task", "--sort", "stars:down"], "--sort: 'down' in 'stars:down' is neither asc nor desc"),
            (["Task", "--sort", "stars,"], "--sort takes ATTRIBUTE[:asc|:desc] keys separated by commas"),
            (["Task", "--limit", "-1"], "--limit needs a value"),
            ([], "missing ENTITY"),
        ]
        for (arguments, message) in cases {
            let result = try Tool.run(["find", store.path] + arguments)
            #expect(result.status == 2, "\(arguments): \(result)")
            #expect(result.stderr.contains(message), "\(arguments): \(result)")
            #expect(result.stdout.isEmpty, "\(arguments): \(result)")
        }
    }

    @Test func aTornTailIsLeftOutAsRecoveryWouldAndTheExitIsOne() throws {
        let store = try TaskFixture.make()
        defer { Fixture.cleanUp(store) }
        let last = try #require(try Fixture.records(store).last)
        try StoreFile.forgetCleanClose(store)
        try StoreFile(store, last.file).truncate(to: last.offset + 20)
        let result = try Tool.run(["find", store.path, "Task", "--where", "blob == null"])
        #expect(result.status == 1, "\(result)")
        // Commit 3 (Task#3's blob set) is the torn one: Task#3 still has no blob.
        #expect(result.stdout.hasPrefix("Task#3  "), "\(result)")
        #expect(result.stdout.hasSuffix("1 of 4 Task objects match (as of sequence 2)\n"), "\(result)")
        #expect(result.stderr.contains("damage: \(last.file) at offset \(last.offset): torn tail"), "\(result)")
        #expect(try Tool.run(["find", store.path, "Task", "--json"]).json()["sequence"] as? Int == 2)
    }
}
