/** What a page that works on one site shows before the first site exists. */
export function NoSites({ title }: { title: string }) {
  return (
    <section>
      <h2>{title}</h2>
      <p>
        No sites yet. <a href="#/sites">Add a site</a> first.
      </p>
    </section>
  );
}
