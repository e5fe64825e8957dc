import Foundation
import Trellis

// Models shared by the context, model and query tests. (`Task` would shadow Swift's, hence `Chore`.)

final class Project: Model {
    @Attribute(.unique) var name = ""
    @Relationship(deleteRule: .cascade, inverse: \Chore.project) var chores: [Chore]

    convenience init(name: String) {
        self.init()
        self.name = name
    }
}

final class Chore: Model {
    @Attribute var title = ""
    @Attribute(.indexed) var due = Date.distantFuture
    @Attribute var done = false
    @Attribute(.indexed) var estimate = 0
    @Attribute var note: String?
    @Relationship var project: Project?

    convenience init(
        title: String, due: Date = .distantFuture, estimate: Int = 0, done: Bool = false, project: Project? = nil
    ) {
        self.init()
        self.title = title
        self.due = due
        self.estimate = estimate
        self.done = done
        self.project = project
    }
}

final class Folder: Model {
    @Attribute var name = ""
    @Attribute var depth = 0
    @Relationship var parent: Folder?
    @Relationship(deleteRule: .cascade, inverse: \Folder.parent) var children: [Folder]

    convenience init(name: String, depth: Int = 0, parent: Folder? = nil) {
        self.init()
        self.name = name
        self.depth = depth
        self.parent = parent
    }
}

func makeStore() throws -> Store {
    try Store(models: [Project.self, Chore.self, Folder.self])
}
