export function NotFound() {
  return (
    <section>
      <h1>Not found</h1>
      <p>
        No such page in the console. <a href="/console/">Back to the start</a>.
      </p>
    </section>
  );
}
